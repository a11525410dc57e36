/* Deliberately non-compliant: see README.md. */
#include <pthread.h>
#include <sys/single_threaded.h>
extern const char *zlibVersion(void);
extern void *_PyObject_GetDictPtr(void *);
extern void *PyUnicode_AsUTF8AndSize(void *, long *);
static void *worker(void *arg) { return arg; }
int kk_bad(void *obj) {
  pthread_t t;
  pthread_create(&t, 0, worker, obj);
  pthread_join(t, 0);
  _PyObject_GetDictPtr(obj);
  PyUnicode_AsUTF8AndSize(obj, 0);
  return (int)__libc_single_threaded + (int)zlibVersion()[0];
}
