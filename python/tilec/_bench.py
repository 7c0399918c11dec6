"""tilec.bench: a quick timing of a kernel, beside a torch or NumPy
function on the same arguments.

On the CPU (and for GPU kernels on arrays torch does not own) each call
is timed on the host clock; a GPU kernel is synchronized after each call
(tilec_synchronize), so its time includes one launch.  On torch CUDA
tensors each call sits between two torch.cuda events on torch's current
stream, the way torch and Triton time kernels, and the events are read
after one synchronize at the end.  Medians and quartiles, not means: a
loaded machine adds a long tail.
"""
import statistics
import sys
import time

from . import _lib


def _quartiles(times):
    s = sorted(times)
    if len(s) == 1:
        return s[0], s[0], s[0]
    q1, q2, q3 = statistics.quantiles(s, n=4, method="inclusive")
    return q1, q2, q3


def _fmt(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return "%.3g %s" % (seconds / scale, unit)
    return "%.3g us" % (seconds / 1e-6)


class Timing:
    """The times of one function's calls, in seconds: `times` (one per
    repeat, in order), `median`, `q1` and `q3` (the quartiles: the
    spread), `min`."""

    def __init__(self, label, times):
        self.label = label
        self.times = list(times)
        self.q1, self.median, self.q3 = _quartiles(self.times)
        self.min = min(self.times)

    def __str__(self):
        return "%s %s (%s-%s, n=%d)" % (self.label, _fmt(self.median),
                                       _fmt(self.q1), _fmt(self.q3),
                                       len(self.times))


class BenchResult:
    """What tilec.bench measured: `kernel` (a Timing), `against` (a
    Timing, or None) and `ratio`, the kernel's median over the other's
    (below 1: the kernel is faster).  str() is one line of a table:

        softmax (cuda): 41.2 us (40.9-41.6 us, n=50) | torch.softmax: 55.0 us (54.1-56.3 us, n=50) | 0.75x
    """

    def __init__(self, kernel, against):
        self.kernel = kernel
        self.against = against
        self.ratio = (kernel.median / against.median
                      if against is not None and against.median > 0
                      else None)

    def __str__(self):
        parts = [str(self.kernel)]
        if self.against is not None:
            parts.append(str(self.against))
            if self.ratio is not None:
                parts.append("%.2fx" % self.ratio)
        return " | ".join(parts)

    __repr__ = __str__


def _torch_cuda(values):
    """(torch, the GPU) of the first torch tensor on a GPU among
    `values`; (None, None) when there is none."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None, None
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_cuda:
            return torch, v.device
    return None, None


def _time_events(torch, device, fn, args, kwargs, repeat):
    with torch.cuda.device(device):
        # The stream the kernel launches on (Kernel.__call__).
        stream = torch.cuda.current_stream(device)
        pairs = []
        for _ in range(repeat):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record(stream)
            fn(*args, **kwargs)
            end.record(stream)
            pairs.append((start, end))
        torch.cuda.synchronize(device)
    return [s.elapsed_time(e) * 1e-3 for s, e in pairs]


def _time_host(fn, args, kwargs, repeat, sync):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        if sync:
            sync()
        times.append(time.perf_counter() - t0)
    return times


def _name(fn):
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__",
                                                        None)
    if not name:
        return type(fn).__name__
    mod = mod.split(".")[0]
    return "%s.%s" % (mod, name) if mod and mod != "__main__" else name


def bench(kernel, *args, against=None, warmup=3, repeat=20, **kwargs):
    """Time `kernel` (a tilec.Kernel) called with `args` and `kwargs`,
    and, when given, `against` (a callable: a torch or NumPy function)
    called with the same arguments.  Each runs `warmup` times untimed
    (the first call raises any error of the arguments), then `repeat`
    times timed.  Returns a BenchResult; print it for a table line."""
    from . import Kernel, RuntimeError as Failed
    if not isinstance(kernel, Kernel):
        raise TypeError("kernel: a tilec.Kernel (tilec.compile's result), "
                        "not %s" % type(kernel).__name__)
    if against is not None and not callable(against):
        raise TypeError("against: a callable taking the kernel's "
                        "arguments, not %s" % type(against).__name__)
    for name, v, least in (("warmup", warmup, 0), ("repeat", repeat, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise ValueError("%s: an integer >= %d, not %r" % (name, least,
                                                                v))
    torch, device = None, None
    if kernel.target != "openmp":
        torch, device = _torch_cuda(list(args) + list(kwargs.values()))
    sync = None
    if kernel.target != "openmp" and torch is None:
        rt = _lib.runtime()

        def sync():
            if rt.tilec_synchronize(kernel._ctx):
                raise Failed((rt.tilec_error(kernel._ctx) or b"").decode(
                    "utf-8", "replace"))

    timings = []
    for label, fn in (("%s (%s)" % (kernel.name, kernel.target), kernel),
                      (_name(against) if against else None, against)):
        if fn is None:
            timings.append(None)
            continue
        for _ in range(warmup):
            fn(*args, **kwargs)
        if torch is not None:
            torch.cuda.synchronize(device)
            times = _time_events(torch, device, fn, args, kwargs, repeat)
        else:
            if sync:
                sync()
            times = _time_host(fn, args, kwargs, repeat, sync)
        timings.append(Timing(label, times))
    return BenchResult(timings[0], timings[1])
