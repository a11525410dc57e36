/* Compliant with manylinux_2_28 and abi3 (3.9): see README.md. */
#include <string.h>
#include <stdlib.h>
extern void *PyModule_Create2(void *, int);
void *PyInit_kk(void) { char *p = malloc(8); memcpy(p, "abc", 4); free(p); return PyModule_Create2(0, 3); }
