"""Compare a case's output (``self.out``) with its reference (what ``verify_<case>`` returns).

Upstream compares with ``torch.allclose(out, reference, atol=1e-2)``; kernelkit keeps those
tolerances as the default (a class may set ``atol``/``rtol``) and adds what a person needs to
act on a mismatch: shapes, dtypes, NaNs and the largest error. Floating results are compared
with ``allclose`` in their promoted dtype (so a float16 kernel against a float32 reference
works); integer and bool results must be equal. Tuples and lists compare element by element.
"""

from __future__ import annotations

from typing import Any

from kernelkit.bench.contract import ATOL, RTOL
from kernelkit.bench.results import Verification


def tolerances(instance: object) -> tuple[float, float]:
    atol = getattr(instance, "atol", ATOL)
    rtol = getattr(instance, "rtol", RTOL)
    return float(atol), float(rtol)


def compare_outputs(out: Any, reference: Any, *, atol: float = ATOL, rtol: float = RTOL
                    ) -> Verification:
    problem, err = _compare(out, reference, atol, rtol, "out")
    if problem is None:
        return Verification(True, True, "matches the reference", err, atol, rtol)
    return Verification(True, False, problem, err, atol, rtol)


def _compare(out: Any, ref: Any, atol: float, rtol: float, where: str
             ) -> tuple[str | None, float | None]:
    import torch

    if out is None:
        return (f"{where} is None: benchmark_<case> must leave its result in self.out", None)
    if isinstance(ref, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(ref):
            return f"{where} is not a sequence of {len(ref)} like the reference", None
        worst: float | None = None
        for i, (o, r) in enumerate(zip(out, ref, strict=True)):
            problem, err = _compare(o, r, atol, rtol, f"{where}[{i}]")
            if problem is not None:
                return problem, err
            worst = err if worst is None or (err is not None and err > worst) else worst
        return None, worst
    if not isinstance(ref, torch.Tensor) or not isinstance(out, torch.Tensor):
        same = bool(out == ref)
        return (None if same else f"{where} = {out!r}, the reference is {ref!r}"), None
    if out.shape != ref.shape:
        return f"{where} has shape {tuple(out.shape)}, the reference {tuple(ref.shape)}", None
    return _compare_tensors(out, ref.to(out.device), atol, rtol, where)


def _compare_tensors(out: Any, ref: Any, atol: float, rtol: float, where: str
                     ) -> tuple[str | None, float | None]:
    import torch

    dtype = torch.promote_types(out.dtype, ref.dtype)
    a, b = out.to(dtype), ref.to(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        if torch.equal(a, b):
            return None, 0.0
        bad = int((a != b).sum())
        diff = float((a.to(torch.float64) - b.to(torch.float64)).abs().max())
        return (f"{where}: {bad} of {a.numel()} elements differ from the reference "
                f"(integer results must be equal; largest difference {diff:g})"), diff
    nan = int(torch.isnan(a).sum()) - int(torch.isnan(b).sum())
    err = float((a - b).abs().max()) if a.numel() else 0.0
    if torch.allclose(a, b, atol=atol, rtol=rtol):
        return None, err
    close = torch.isclose(a, b, atol=atol, rtol=rtol)
    bad = int((~close).sum())
    nan_note = f", {nan} more NaN than the reference" if nan > 0 else ""
    return (f"{where}: {bad} of {a.numel()} elements differ from the reference beyond "
            f"atol={atol:g}, rtol={rtol:g} (largest error {err:g}{nan_note})"), err
