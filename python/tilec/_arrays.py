"""Arrays described to the runtime as tilec_arg tensors: their data
pointer, dtype, shape, strides (in elements), where the memory is and
whether it is read-only (a NumPy array that is not writeable, a DLPack 1
tensor flagged so; the runtime refuses those for a parameter the kernel
writes).

NumPy arrays and torch tensors are read directly (cheap, and safe under
CUDA graph capture); anything else with __dlpack__ through its DLPack
capsule.  Nothing here checks an array against a kernel: the runtime
does (tilec_launch_checked).  What cannot be described (an unsupported
dtype) is passed as such, so the runtime's message names the parameter,
and a note saying what the array was is added to it.
"""
import ctypes
import glob
import numbers
import os
import struct
import sys

from . import _lib

# NumPy's and torch's dtype names -> tilec's.  bf16 tensors travel as
# uint16 bit patterns in NumPy, which has no bfloat16.
NUMPY = {"float64": "f64", "float32": "f32", "float16": "f16",
         "uint16": "bf16", "int64": "i64", "int32": "i32", "int8": "i8",
         "uint8": "u8", "bool": "bool"}
TORCH = {"float64": "f64", "float32": "f32", "float16": "f16",
         "bfloat16": "bf16", "int64": "i64", "int32": "i32", "int8": "i8",
         "uint8": "u8", "bool": "bool", "float8_e4m3fn": "fp8e4m3",
         "float8_e5m2": "fp8e5m2"}
# DLPack (type code, bits) -> tilec.
DLPACK = {(2, 64): "f64", (2, 32): "f32", (2, 16): "f16", (4, 16): "bf16",
          (0, 64): "i64", (0, 32): "i32", (0, 8): "i8", (1, 8): "u8",
          (6, 8): "bool", (1, 16): "bf16"}
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_ROCM = 1, 2, 3, 10

NO_DTYPE = 12  # TILEC_DTYPE_COUNT: refused, with the parameter named


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensorVersioned(ctypes.Structure):
    """DLPack 1's capsule contents ("dltensor_versioned"): its version,
    owner, deleter, flags (DLPACK_READ_ONLY...), then the DLTensor."""
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


DLPACK_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

_dtype_codes = {}


def _dtype(name):
    if name not in _dtype_codes:
        rt = _lib.runtime()
        _dtype_codes[name] = rt.tilec_dtype_from_name(name.encode())
    return _dtype_codes[name]


MAX_RANK = 8  # the runtime's largest tensor rank (runtime/signature.c)

# tilec_arg's fields in order, as the C compiler lays them out ('@':
# native sizes and alignment): size, name, kind, data, dtype, rank,
# shape, strides, ivalue, fvalue, memory, device, read_only.  One
# pack_into writes
# an argument whole, at half the cost of setting its ctypes fields one
# by one; python/tests checks that it lands where _lib.Arg reads.
ARG = struct.Struct("@QPiPiiPPqdiii")
ARG_SIZE = ctypes.sizeof(_lib.Arg)
_pack_arg = ARG.pack_into
INT64 = (-(1 << 63), (1 << 63) - 1)
ARG_TENSOR, MEMORY_HOST = _lib.ARG_TENSOR, _lib.MEMORY_HOST
MEMORY_DEVICE = _lib.MEMORY_DEVICE


class Slot:
    """Where one argument of a call goes: its tilec_arg in the call's
    array (`arr` at byte offset `off`) and the shape and strides buffers
    it points to, made once and reused by every call of a kernel
    (Kernel keeps them per thread), so that a call writes numbers in
    instead of allocating ctypes objects."""

    __slots__ = ("arr", "off", "shape", "strides", "shape_at", "strides_at",
                 "n")

    def __init__(self, arr, i):
        self.arr, self.off = arr, i * ARG_SIZE
        self.fit(MAX_RANK)

    def fit(self, rank):
        """Buffers for `rank` dims; a larger rank than the runtime knows
        still gets its whole shape described (and refused there)."""
        self.n = max(rank, MAX_RANK)
        self.shape = (ctypes.c_int64 * self.n)()
        self.strides = (ctypes.c_int64 * self.n)()
        self.shape_at = ctypes.addressof(self.shape)
        self.strides_at = ctypes.addressof(self.strides)


def _tensor(slot, name, data, code, shape, strides, memory, device,
            read_only=0):
    """Write a tensor argument (`name`: the address of its name, 0 by
    position; `data` None or 0 for none); strides None: row-major
    contiguous (the runtime's NULL); read_only 1 when the memory must
    not be written (the runtime refuses it for a non-const parameter)."""
    n = len(shape)
    if n > slot.n:
        slot.fit(n)
    if n == 1:
        slot.shape[0] = shape[0]
    else:
        slot.shape[:n] = shape
    if strides is None:
        at = 0
    else:
        slot.strides[:n] = strides
        at = slot.strides_at
    _pack_arg(slot.arr, slot.off, ARG_SIZE, name, _lib.ARG_TENSOR, data or 0,
              code, n, slot.shape_at, at, 0, 0.0, memory, device, read_only)


# Each NumPy or torch dtype seen: (tilec's dtype, or NO_DTYPE with what
# the array was for the message); dtype names are slow to compute.
_numpy_dtypes = {}
_torch_dtypes = {}


def _numpy_dtype(dt):
    e = _numpy_dtypes.get(dt)
    if e is None:
        name = NUMPY.get(dt.name) if dt.isnative else None
        if name:
            e = (_dtype(name), None)
        elif not dt.isnative:
            e = (NO_DTYPE, "a NumPy array of %s in non-native byte order "
                 "('%s')" % (dt.name, dt.str))
        else:
            e = (NO_DTYPE, "a NumPy array of %s" % dt.name)
        _numpy_dtypes[dt] = e
    return e


def _torch_dtype(dt):
    e = _torch_dtypes.get(dt)
    if e is None:
        name = str(dt).replace("torch.", "")
        e = ((_dtype(TORCH[name]), None) if name in TORCH
             else (NO_DTYPE, "a torch tensor of %s" % name))
        _torch_dtypes[dt] = e
    return e


class _ArrayInterface(ctypes.Structure):
    """PyArrayInterface, what ndarray.__array_struct__'s capsule holds:
    the data pointer and flags at C speed (ndarray.ctypes.data builds a
    Python object each time and costs about twice as much)."""
    _fields_ = [("two", ctypes.c_int), ("nd", ctypes.c_int),
                ("typekind", ctypes.c_char), ("itemsize", ctypes.c_int),
                ("flags", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
                ("data", ctypes.c_void_p), ("descr", ctypes.c_void_p)]


NPY_ARRAY_C_CONTIGUOUS = 0x0001
NPY_ARRAY_WRITEABLE = 0x0400


def _element_strides(value, item):
    """An array's strides in elements.  Byte strides that are not whole
    elements cannot be row-major: -1 makes the runtime say the tensor is
    not contiguous."""
    return [s // item if s % item == 0 else -1 for s in value.strides]


def _numpy(slot, name, value, notes, keep):
    """Any ndarray, through __array_struct__ (the data pointer without
    the Python object ndarray.ctypes.data builds)."""
    code, what = _numpy_dtypes.get(value.dtype) or _numpy_dtype(value.dtype)
    if what:
        notes.append(what)
    capsule = value.__array_struct__
    ai = _ArrayInterface.from_address(_capsule_pointer(capsule, None))
    strides = (None if ai.flags & NPY_ARRAY_C_CONTIGUOUS
               else _element_strides(value, ai.itemsize))
    _tensor(slot, name, ai.data if value.size else None, code, value.shape,
            strides, _lib.MEMORY_HOST, 0,
            0 if ai.flags & NPY_ARRAY_WRITEABLE else 1)


# NumPy's PyArrayObject (ndarraytypes.h, part of its C ABI: PyArray_DATA
# reads it) is PyObject_HEAD and then `char *data`; in CPython id() is
# the object's address.  Where that holds, the data pointer is read
# there, at a third of __array_struct__'s cost.  It is relied on for a
# type only after it gave the right pointer for a probe and for that
# type's first array (_numpy_reads_data); elsewhere _numpy is used.
DATA_AT = object.__basicsize__
_pointer_at = ctypes.c_void_p.from_address
_probed = []


def _numpy_head_data(value):
    return _pointer_at(id(value) + DATA_AT).value


def _numpy_reads_data(value):
    """True when _numpy_head_data gives `value`'s data pointer, and a
    probe's (an offset view of a fresh array): the layout is NumPy's."""
    import numpy as np
    if not _probed:
        base = np.arange(7, dtype=np.int64)
        probe = base[3:]
        _probed.append(
            _numpy_head_data(base) == base.__array_interface__["data"][0]
            and _numpy_head_data(probe) ==
            probe.__array_interface__["data"][0])
    return _probed[0] and value.size > 0 and \
        _numpy_head_data(value) == value.__array_interface__["data"][0]


def _numpy_fast(slot, name, value, notes, keep):
    """An ndarray of a type _numpy_reads_data accepted: _tensor's work
    done inline for the commonest argument (a contiguous array)."""
    code, what = _numpy_dtypes.get(value.dtype) or _numpy_dtype(value.dtype)
    if what:
        notes.append(what)
    shape = value.shape
    data = _pointer_at(id(value) + DATA_AT).value if value.size else 0
    flags = value.flags
    read_only = 0 if flags.writeable else 1
    if not flags.c_contiguous:
        _tensor(slot, name, data, code, shape,
                _element_strides(value, value.itemsize), _lib.MEMORY_HOST, 0,
                read_only)
        return
    n = len(shape)
    if n == 1:
        slot.shape[0] = shape[0]
    elif n <= slot.n:
        slot.shape[:n] = shape
    else:
        _tensor(slot, name, data, code, shape, None, _lib.MEMORY_HOST, 0,
                read_only)
        return
    _pack_arg(slot.arr, slot.off, ARG_SIZE, name, ARG_TENSOR, data or 0,
              code, n, slot.shape_at, 0, 0, 0.0, MEMORY_HOST, 0, read_only)


# torch's function for the current stream's handle (what torch's own
# launches read: an int, without a torch.cuda.Stream object), looked up
# once.
_raw_stream = []


def stream_of(device):
    """torch's current stream on GPU `device`, as an int (a CUstream or
    hipStream_t)."""
    if not _raw_stream:
        import torch
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is None:
            def raw(d):
                return torch.cuda.current_stream(d).cuda_stream
        _raw_stream.append(raw)
    return _raw_stream[0](device)


def _torch(slot, name, value, notes, keep):
    """A torch tensor; returns its GPU's ordinal when it is on one (the
    launch goes on that GPU's current stream).  The hottest describer:
    each torch attribute read costs a call into torch, so each is read
    once (get_device() says both where the tensor is and which GPU; an
    empty tensor's data pointer is passed as it is, the runtime reads no
    element of it).  torch has no read-only tensors: none is marked so."""
    code, what = _torch_dtypes.get(value.dtype) or _torch_dtype(value.dtype)
    if what:
        notes.append(what)
    device = value.get_device()  # -1 on the CPU
    if device >= 0 and value.is_cuda:  # ROCm builds name their GPUs cuda
        memory, gpu = MEMORY_DEVICE, device
    elif device < 0 and value.is_cpu:
        memory, device, gpu = MEMORY_HOST, 0, None
    else:
        memory, device, gpu = MEMORY_DEVICE, max(device, 0), None
    shape = value.shape
    n = len(shape)
    if n > slot.n:
        slot.fit(n)
    if n == 1:
        slot.shape[0] = shape[0]
    else:
        slot.shape[:n] = shape
    if value.is_contiguous():
        at = 0
    else:
        slot.strides[:n] = value.stride()
        at = slot.strides_at
    _pack_arg(slot.arr, slot.off, ARG_SIZE, name, ARG_TENSOR,
              value.data_ptr(), code, n, slot.shape_at, at, 0, 0.0, memory,
              device, 0)
    return gpu


class Unfit(ValueError):
    """A number no tilec_arg can hold; the caller names the argument."""


def _int(slot, name, value, notes, keep):
    v = int(value)
    if not INT64[0] <= v <= INT64[1]:
        raise Unfit("%d does not fit in 64 bits" % v)
    _pack_arg(slot.arr, slot.off, ARG_SIZE, name, _lib.ARG_INT, 0, 0, 0, 0,
              0, v, 0.0, 0, 0, 0)


def _float(slot, name, value, notes, keep):
    _pack_arg(slot.arr, slot.off, ARG_SIZE, name, _lib.ARG_FLOAT, 0, 0, 0, 0,
              0, 0, float(value), 0, 0, 0)


def _dlpack(slot, name, value, notes, keep):
    """DLPack 1 where the producer speaks it: its capsule says whether
    the tensor is read-only.  A producer without max_version gives the
    first DLPack's capsule, which cannot say so (NumPy refuses to
    export a read-only array through it)."""
    read_only = 0
    try:
        capsule = value.__dlpack__(max_version=(1, 0))
    except TypeError:
        capsule = value.__dlpack__()
    if _capsule_name(capsule) == b"dltensor_versioned":
        m = _DLManagedTensorVersioned.from_address(
            _capsule_pointer(capsule, b"dltensor_versioned"))
        if m.major != 1:
            raise BufferError("a DLPack %d.%d tensor, where 1 was asked "
                              "for" % (m.major, m.minor))
        t = m.dl_tensor
        read_only = 1 if m.flags & DLPACK_READ_ONLY else 0
    else:
        # DLManagedTensor starts with its DLTensor.
        t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    code = (t.dtype.code, t.dtype.bits) if t.dtype.lanes == 1 else None
    dname = DLPACK.get(code)
    if not dname:
        notes.append("a DLPack tensor of type code %s" % (code,))
    data = (t.data or 0) + t.byte_offset
    memory = (_lib.MEMORY_HOST
              if t.device.device_type in (DL_CPU, DL_CUDA_HOST)
              else _lib.MEMORY_DEVICE)
    _tensor(slot, name, data or None, _dtype(dname) if dname else NO_DTYPE,
            shape, strides, memory, t.device.device_id, read_only)
    keep.append(capsule)


# Exact types -> how to describe them, filled as types are met (a
# subclass of ndarray or torch.Tensor is found by isinstance once).
KINDS = {}


def _kind(value):
    t = type(value)
    k = KINDS.get(t)
    if k is None:
        np = sys.modules.get("numpy")
        torch = sys.modules.get("torch")
        if np is not None and isinstance(value, np.ndarray):
            if value.size == 0:
                return _numpy  # the type is decided on an array with data
            k = _numpy_fast if _numpy_reads_data(value) else _numpy
        elif torch is not None and isinstance(value, torch.Tensor):
            k = _torch
        elif hasattr(value, "__dlpack__"):
            k = _dlpack
        elif isinstance(value, numbers.Integral):
            k = _int
        elif isinstance(value, numbers.Real):
            k = _float
        else:
            return None  # refused, and not remembered
        KINDS[t] = k
    return k


def describer(value, name):
    """The function that describes `value` (the argument called `name`,
    None by position) to the runtime, called as
    f(slot, name_address, value, notes, keep): `slot` is where it goes
    (Slot), `name_address` the address of its name's bytes (0 by
    position), `notes` gets what the runtime's message should add about
    an array it cannot take, `keep` what must live until the launch
    returns; it returns the GPU of a torch tensor on one (whose stream
    the launch goes on), else None, and raises Unfit for a number no
    argument can hold.  TypeError for a value that is neither a tensor
    nor a number.  KINDS.get(type(value)) finds it first for the types
    met before."""
    k = _kind(value)
    if k is None:
        raise TypeError("%s: a tensor (NumPy, torch, DLPack) or a number, "
                        "not %s" % ("argument '%s'" % name if name
                                    else "an argument by position",
                                    type(value).__name__))
    return k


def unfit(args, kwargs):
    """Which argument Unfit was about: the first integer outside 64 bits,
    as 'argument 2 (by position)' or "argument 'N'"."""
    for i, v in enumerate(args):
        if isinstance(v, numbers.Integral) and not \
                INT64[0] <= int(v) <= INT64[1]:
            return "argument %d (by position)" % (i + 1)
    for name, v in kwargs.items():
        if isinstance(v, numbers.Integral) and not \
                INT64[0] <= int(v) <= INT64[1]:
            return "argument '%s'" % name
    return "an argument"


_looked = []
SYSTEM_CUDA = "/usr/local/cuda"


def find_cuda_toolkit():
    """Where the runtime looks for NVRTC and cuda_fp16.h when neither
    TILEC_NVRTC nor CUDA_HOME says: a system toolkit first
    (/usr/local/cuda, the loader's path), then the nvidia-cuda-nvrtc and
    nvidia-cuda-runtime wheels a PyTorch environment has."""
    if _looked:
        return
    _looked.append("TILEC_NVRTC=%s" % os.environ.get("TILEC_NVRTC", ""))
    _looked.append("CUDA_HOME=%s" % os.environ.get("CUDA_HOME", ""))
    if os.environ.get("TILEC_NVRTC") or os.environ.get("CUDA_HOME") or \
            os.path.exists(os.path.join(SYSTEM_CUDA, "include",
                                        "cuda_fp16.h")):
        return
    for base in sys.path:
        nv = os.path.join(base, "nvidia")
        if not os.path.isdir(nv):
            continue
        libs = sorted(glob.glob(os.path.join(nv, "cuda_nvrtc", "lib",
                                             "libnvrtc.so*")))
        _looked.append(os.path.join(nv, "cuda_nvrtc", "lib"))
        if libs:
            os.environ["TILEC_NVRTC"] = libs[-1]
        inc = os.path.join(nv, "cuda_runtime")
        _looked.append(os.path.join(inc, "include"))
        if os.path.exists(os.path.join(inc, "include", "cuda_fp16.h")):
            os.environ["CUDA_HOME"] = inc
        if libs:
            return


def nvrtc_note():
    return "; NVRTC and the CUDA headers were looked for in: %s" % (
        ", ".join(_looked) or "the loader's path and /usr/local/cuda")
