"""tilec.torch_op: a kernel as a torch.library custom operator, so that
torch.compile (and torch.export, FakeTensor tracing) treats the call as
one opaque op instead of stepping into ctypes.

The operator's arguments are the kernel's parameters that cannot be
inferred (the tensors, and the scalars that are no tensor's extent), in
signature order; the extents come from the shapes as in a plain call.
The tensors the kernel writes are declared mutated (mutates_args), the
operator returns nothing, and its fake implementation does nothing, which
is all torch needs to trace it: the outputs are the caller's tensors.

torch is imported when torch_op is called, never when tilec is.
"""
import inspect


def op_params(kernel, outputs=None):
    """[(name, "tensor" | "int" | "float"), ...] the operator takes and the
    names of the tensors it writes: `outputs`, or every tensor parameter
    not declared const.  ValueError for an output that is no tensor
    parameter."""
    params = kernel.manifest["params"]
    tensors = [p["name"] for p in params if p["kind"] == "tensor"]
    if outputs is None:
        outputs = [p["name"] for p in params
                   if p["kind"] == "tensor" and not p.get("const")]
    elif isinstance(outputs, str):
        outputs = [outputs]
    outputs = list(outputs)
    for o in outputs:
        if o not in tensors:
            raise ValueError("outputs: %s has no tensor parameter %r (its "
                             "tensors: %s)" % (kernel.name, o,
                                               ", ".join(tensors)))
    taken = []
    for p in params:
        if p["kind"] == "tensor":
            taken.append((p["name"], "tensor"))
        elif not p.get("extent_of"):
            floating = p["dtype"] in ("f64", "f32", "f16", "bf16")
            taken.append((p["name"], "float" if floating else "int"))
    return taken, outputs


def torch_op(kernel, name, outputs=None, device_types=None):
    """Register `kernel` (a tilec.Kernel) as the torch custom operator
    `name` ("namespace::op", as torch.library.custom_op wants) and return
    it (a torch CustomOpDef: call it like the kernel with the arguments
    that cannot be inferred, by position or name).  `outputs` names the
    tensors the kernel writes (default: every tensor parameter that is not
    const); `device_types` is passed to torch ("cuda", "cpu"; default: the
    kernel's, cpu for openmp, cuda for cuda and hip)."""
    from . import Kernel
    if not isinstance(kernel, Kernel):
        raise TypeError("kernel: a tilec.Kernel (tilec.compile's result), "
                        "not %s" % type(kernel).__name__)
    if not isinstance(name, str) or name.count("::") != 1 or \
            not all(name.split("::")):
        raise ValueError("name: 'namespace::op_name', not %r" % (name,))
    taken, mutated = op_params(kernel, outputs)
    try:
        import torch
    except ImportError as e:
        raise ImportError("tilec.torch_op needs torch (pip install torch): "
                          "%s" % e) from e
    if device_types is None:
        device_types = "cpu" if kernel.target == "openmp" else "cuda"
    kinds = {"tensor": torch.Tensor, "int": int, "float": float}
    names = [n for n, _ in taken]

    def run(*args, **kwargs):
        bound = dict(zip(names, args))
        bound.update(kwargs)
        kernel(**bound)

    run.__name__ = name.split("::")[1]
    run.__qualname__ = run.__name__
    run.__doc__ = "tilec kernel %s (%s)" % (kernel.name, kernel.target)
    # custom_op reads the operator's schema from the signature.
    run.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                           annotation=kinds[k]) for n, k in taken],
        return_annotation=None)
    op = torch.library.custom_op(name, run, mutates_args=tuple(mutated),
                                 device_types=device_types)

    @op.register_fake
    def _(*args, **kwargs):
        return None

    return op
