/*
 * _fast.c - tilec.Kernel's call in one C call: the arguments (torch
 * tensors, NumPy arrays, Python ints and floats) described straight into
 * a tilec_arg array on the stack and libtilec_runtime's
 * tilec_launch_checked called on it, with the GIL released around the
 * launch as ctypes releases it.
 *
 * An optional accelerator of the ctypes path (_arrays.py describes the
 * same things the same way): the package works without it, and
 * TILEC_PYTHON_CTYPES=1 turns it off.  It links nothing of tilec: the
 * runtime is the one ctypes loaded, and the Launcher of each kernel is
 * given the address of its tilec_launch_checked.  tilec_arg's layout is
 * written out here (so the package builds without the runtime's
 * headers); arg_layout() reports it and the package uses this module
 * only when it matches the ctypes declaration (_lib.Arg).
 *
 * It decides nothing the ctypes path would decide differently: every
 * check of the arguments is the runtime's, and any argument it does not
 * describe exactly as _arrays.py would (another type, a dtype with no
 * tilec name, a rank over MAX_RANK, an int over 64 bits, more than
 * MAX_ARGS arguments) makes Launcher.launch return NOT_HERE before
 * anything is launched, and the ctypes path makes the call (and raises
 * its errors).  Which Python type is a torch tensor or a NumPy array is
 * _arrays.KINDS's answer (_arrays._kind's for a type not met before),
 * which setup() hands over.  A C-contiguous ndarray is read from its
 * PyArrayObject head (NumPy's C ABI) once the first one read there
 * agreed with its __array_struct__; torch tensors through their
 * Python attributes, by vectorcall.  An ndarray that is not writeable
 * is marked read_only, which the runtime refuses for a parameter the
 * kernel writes; torch has no read-only tensors.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* tilec_arg (tilec_runtime.h), field for field. */
typedef struct Arg {
	size_t size;         /* sizeof(Arg): which version of the struct */
	const char *name;    /* the parameter, NULL by position */
	int kind;            /* ARG_TENSOR, ARG_INT, ARG_FLOAT */
	void *data;          /* tensor: its data */
	int dtype;           /* tensor: tilec_dtype */
	int rank;            /* tensor: number of dims */
	const int64_t *shape;   /* tensor: rank extents */
	const int64_t *strides; /* tensor: in elements, NULL: contiguous */
	long long ivalue;    /* ARG_INT */
	double fvalue;       /* ARG_FLOAT */
	int memory;          /* tensor: MEMORY_HOST or MEMORY_DEVICE */
	int device;          /* tensor: the GPU, with MEMORY_DEVICE */
	int read_only;       /* tensor: 1 when it must not be written */
} Arg;

enum { ARG_TENSOR = 1, ARG_INT, ARG_FLOAT };
enum { MEMORY_HOST = 1, MEMORY_DEVICE = 2 };
enum {
	MAX_RANK = 8,      /* the runtime's largest rank (_arrays.MAX_RANK) */
	MAX_ARGS = 32,     /* arguments described on the stack */
	NOT_HERE = -1,     /* launch(): the ctypes path must make this call */
	DTYPE_CACHE = 32,  /* dtype objects remembered by identity */
	NPY_C_CONTIGUOUS = 0x0001,
	NPY_WRITEABLE = 0x0400,
};

/* tilec_launch_checked. */
typedef int (*LaunchFn)(void *kernel, const Arg *args, int nargs,
			void *stream);

/* PyArrayInterface: what ndarray.__array_struct__'s capsule holds
 * (NumPy's C ABI; _arrays._ArrayInterface reads the same). */
typedef struct ArrayInterface {
	int two;             /* 2, always */
	int nd;              /* number of dims */
	char typekind;       /* 'f', 'i', ... */
	int itemsize;        /* bytes an element */
	int flags;           /* NPY_C_CONTIGUOUS, ... */
	Py_ssize_t *shape;   /* nd extents */
	Py_ssize_t *strides; /* nd strides in bytes */
	void *data;          /* the first element */
	PyObject *descr;     /* unused here */
} ArrayInterface;

/* What setup() was given, shared by every Launcher. */
static PyObject *kinds;        /* _arrays.KINDS: type -> describer */
static PyObject *kind_of;      /* _arrays._kind(value): it, for a new type */
static PyObject *torch_kind;   /* _arrays._torch */
static PyObject *numpy_kinds;  /* (_arrays._numpy_fast, _arrays._numpy) */
static PyObject *torch_dtype;  /* _arrays._torch_dtype(dt) -> (code, note) */
static PyObject *numpy_dtype;  /* _arrays._numpy_dtype: the same */
static PyObject *stream_of;    /* _arrays.stream_of(gpu) -> int */

/* Attribute and method names, interned once. */
static PyObject *s_dtype, *s_get_device, *s_is_cuda, *s_is_cpu, *s_shape,
	*s_is_contiguous, *s_stride, *s_data_ptr, *s_array_struct;

/* dtype objects met before, with their tilec dtype: torch's and NumPy's
 * builtin dtypes are singletons, so identity finds them without hashing
 * (NumPy hashes a dtype by its contents). */
typedef struct DtypeSeen {
	PyObject *dtype; /* a strong reference */
	int code;        /* its tilec_dtype */
} DtypeSeen;
static DtypeSeen seen[DTYPE_CACHE];
static int nseen;

/* A launcher: one kernel and the runtime's launch. */
typedef struct Launcher {
	PyObject_HEAD
	LaunchFn launch; /* the runtime's tilec_launch_checked */
	void *kernel;    /* the tilec_kernel */
	int gpu;         /* a GPU backend: launch on torch's current stream */
} Launcher;

static PyObject *
call_method(PyObject *obj, PyObject *name)
{
#if PY_VERSION_HEX >= 0x03090000
	PyObject *args[1] = { obj };
	return PyObject_VectorcallMethod(name, args,
					 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
					 NULL);
#else
	return PyObject_CallMethodObjArgs(obj, name, NULL);
#endif
}

/* The tilec dtype of `dt` as `name_of` (one of _arrays' functions)
 * gives it: 1 found, 0 a dtype with no tilec name (the ctypes path
 * notes what it was), -1 on error. */
static int
dtype_code(PyObject *name_of, PyObject *dt, int *code)
{
	for (int i = 0; i < nseen; i++)
		if (seen[i].dtype == dt) {
			*code = seen[i].code;
			return 1;
		}
	PyObject *e = PyObject_CallFunctionObjArgs(name_of, dt, NULL);
	if (!e)
		return -1;
	if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 2 ||
	    PyTuple_GET_ITEM(e, 1) != Py_None) {
		Py_DECREF(e);
		return 0;
	}
	long c = PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
	Py_DECREF(e);
	if (c == -1 && PyErr_Occurred())
		return -1;
	*code = (int)c;
	if (nseen < DTYPE_CACHE) {
		Py_INCREF(dt);
		seen[nseen].dtype = dt;
		seen[nseen++].code = *code;
	}
	return 1;
}

/* Extents from a tuple of ints (a torch.Size, a stride() tuple) into
 * out[MAX_RANK]: the count, NOT_HERE over MAX_RANK, -2 on error. */
static int
int_tuple(PyObject *t, int64_t *out)
{
	if (!PyTuple_Check(t))
		return NOT_HERE;
	Py_ssize_t n = PyTuple_GET_SIZE(t);
	if (n > MAX_RANK)
		return NOT_HERE;
	for (Py_ssize_t d = 0; d < n; d++) {
		long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, d));
		if (v == -1 && PyErr_Occurred())
			return -2;
		out[d] = v;
	}
	return (int)n;
}

/* A torch tensor, as _arrays._torch describes it; *gpu gets its GPU
 * when it is on one (cuda).  1 described, 0 not here, -1 error. */
static int
describe_torch(PyObject *v, Arg *a, int64_t *shape, int64_t *strides,
	       int *gpu)
{
	int ok = -1, code = 0, n;
	PyObject *dt = NULL, *dev = NULL, *where = NULL, *size = NULL,
		 *contig = NULL, *stride = NULL, *ptr = NULL;
	if (!(dt = PyObject_GetAttr(v, s_dtype)))
		goto out;
	if ((ok = dtype_code(torch_dtype, dt, &code)) != 1)
		goto out;
	ok = -1;
	if (!(dev = call_method(v, s_get_device)))
		goto out;
	long device = PyLong_AsLong(dev); /* -1 on the CPU */
	if (device == -1 && PyErr_Occurred())
		goto out;
	/* ROCm builds name their GPUs cuda too. */
	if (!(where = PyObject_GetAttr(v, device >= 0 ? s_is_cuda : s_is_cpu)))
		goto out;
	int yes = PyObject_IsTrue(where);
	if (yes < 0)
		goto out;
	a->memory = device < 0 && yes ? MEMORY_HOST : MEMORY_DEVICE;
	a->device = device >= 0 ? (int)device : 0;
	*gpu = device >= 0 && yes ? (int)device : -1;
	if (!(size = PyObject_GetAttr(v, s_shape)))
		goto out;
	if ((n = int_tuple(size, shape)) < 0) {
		ok = n == NOT_HERE ? 0 : -1;
		goto out;
	}
	if (!(contig = call_method(v, s_is_contiguous)))
		goto out;
	if ((yes = PyObject_IsTrue(contig)) < 0)
		goto out;
	a->strides = NULL;
	if (!yes) {
		if (!(stride = call_method(v, s_stride)))
			goto out;
		int ns = int_tuple(stride, strides);
		if (ns != n) {
			ok = ns == -2 ? -1 : 0;
			goto out;
		}
		a->strides = strides;
	}
	if (!(ptr = call_method(v, s_data_ptr)))
		goto out;
	a->data = PyLong_AsVoidPtr(ptr);
	if (!a->data && PyErr_Occurred())
		goto out;
	a->kind = ARG_TENSOR;
	a->dtype = code;
	a->rank = n;
	a->shape = shape;
	ok = 1;
out:
	Py_XDECREF(dt);
	Py_XDECREF(dev);
	Py_XDECREF(where);
	Py_XDECREF(size);
	Py_XDECREF(contig);
	Py_XDECREF(stride);
	Py_XDECREF(ptr);
	return ok;
}

/* NumPy's PyArrayObject_fields (ndarraytypes.h): the head of every
 * ndarray, part of NumPy's C ABI (PyArray_DATA and PyArray_DESCR read
 * it), the same in NumPy 1 and 2. */
typedef struct NumpyHead {
	PyObject_HEAD
	char *data;          /* the first element */
	int nd;              /* number of dims */
	Py_ssize_t *dims;    /* nd extents */
	Py_ssize_t *strides; /* nd strides in bytes */
	PyObject *base;      /* what owns the data, or NULL */
	PyObject *descr;     /* the dtype (ndarray.dtype is this object) */
	int flags;           /* NPY_C_CONTIGUOUS, ... */
} NumpyHead;

/* Whether ndarrays are read through NumpyHead: not known until the
 * first one is checked against __array_struct__ (head_agrees). */
enum { HEAD_UNKNOWN, HEAD_READ, HEAD_NOT_READ };
static int numpy_head = HEAD_UNKNOWN;

/* Shape, strides, data, dtype and flags of `v` as NumpyHead reads
 * them are those __array_struct__ and .dtype give (ai). */
static int
head_agrees(PyObject *v, const ArrayInterface *ai)
{
	const NumpyHead *h = (const NumpyHead *)v;
	PyObject *dt = PyObject_GetAttr(v, s_dtype);
	if (!dt)
		return -1;
	int same = dt == h->descr && h->data == ai->data && h->nd == ai->nd &&
		   (h->flags & NPY_C_CONTIGUOUS) == (ai->flags & NPY_C_CONTIGUOUS) &&
		   (h->flags & NPY_WRITEABLE) == (ai->flags & NPY_WRITEABLE);
	Py_DECREF(dt);
	for (int d = 0; same && d < h->nd; d++)
		same = h->dims[d] == ai->shape[d] &&
		       h->strides[d] == ai->strides[d];
	return same;
}

/* A NumPy array as _arrays._numpy describes it: through its head, for
 * a C-contiguous array of a type _arrays found there (`fast`), once the
 * head has been seen to agree with __array_struct__; else through
 * __array_struct__ (a capsule made and freed each call).  1 described,
 * 0 not here, -1 error. */
static int
describe_numpy(PyObject *v, int fast, Arg *a, int64_t *shape,
	       int64_t *strides)
{
	const NumpyHead *h = (const NumpyHead *)v;
	int ok = -1, code = 0;
	if (fast && numpy_head == HEAD_READ && (h->flags & NPY_C_CONTIGUOUS) &&
	    h->nd <= MAX_RANK) {
		if ((ok = dtype_code(numpy_dtype, h->descr, &code)) != 1)
			return ok;
		long long count = 1;
		for (int d = 0; d < h->nd; d++) {
			shape[d] = h->dims[d];
			count *= shape[d] != 0;
		}
		a->kind = ARG_TENSOR;
		a->data = count ? h->data : NULL;
		a->dtype = code;
		a->rank = h->nd;
		a->shape = shape;
		a->strides = NULL;
		a->memory = MEMORY_HOST;
		a->device = 0;
		a->read_only = !(h->flags & NPY_WRITEABLE);
		return 1;
	}
	PyObject *dt = NULL, *cap = NULL;
	if (!(dt = PyObject_GetAttr(v, s_dtype)))
		goto out;
	if ((ok = dtype_code(numpy_dtype, dt, &code)) != 1)
		goto out;
	ok = -1;
	if (!(cap = PyObject_GetAttr(v, s_array_struct)))
		goto out;
	const ArrayInterface *ai = PyCapsule_GetPointer(cap, NULL);
	if (!ai)
		goto out;
	ok = 0;
	if (ai->two != 2 || ai->nd < 0 || ai->nd > MAX_RANK || ai->itemsize <= 0)
		goto out;
	if (fast && numpy_head == HEAD_UNKNOWN) {
		int agrees = head_agrees(v, ai);
		if (agrees < 0) {
			ok = -1;
			goto out;
		}
		numpy_head = agrees ? HEAD_READ : HEAD_NOT_READ;
	}
	long long count = 1;
	for (int d = 0; d < ai->nd; d++) {
		shape[d] = ai->shape[d];
		count *= shape[d] != 0;
	}
	a->strides = NULL;
	if (!(ai->flags & NPY_C_CONTIGUOUS)) {
		/* Byte strides that are not whole elements cannot be
		 * row-major: -1 makes the runtime say so. */
		for (int d = 0; d < ai->nd; d++)
			strides[d] = ai->strides[d] % ai->itemsize
					     ? -1
					     : ai->strides[d] / ai->itemsize;
		a->strides = strides;
	}
	a->kind = ARG_TENSOR;
	a->data = count ? ai->data : NULL;
	a->dtype = code;
	a->rank = ai->nd;
	a->shape = shape;
	a->memory = MEMORY_HOST;
	a->device = 0;
	a->read_only = !(ai->flags & NPY_WRITEABLE);
	ok = 1;
out:
	Py_XDECREF(dt);
	Py_XDECREF(cap);
	return ok;
}

/* One argument into a (zeroed, its name set).  *gpu gets the GPU of a
 * torch tensor on one, else -1.  1 described, 0 not here, -1 error. */
static int
describe(PyObject *v, Arg *a, int64_t *shape, int64_t *strides, int *gpu)
{
	*gpu = -1;
	if (PyFloat_CheckExact(v)) {
		a->kind = ARG_FLOAT;
		a->fvalue = PyFloat_AS_DOUBLE(v);
		return 1;
	}
	if (PyLong_CheckExact(v) || PyBool_Check(v)) {
		int over = 0;
		long long x = PyLong_AsLongLongAndOverflow(v, &over);
		if (over)
			return 0; /* the ctypes path names it (Unfit) */
		if (x == -1 && PyErr_Occurred())
			return -1;
		a->kind = ARG_INT;
		a->ivalue = x;
		return 1;
	}
	PyObject *k = PyDict_GetItemWithError(kinds, (PyObject *)Py_TYPE(v));
	if (!k && PyErr_Occurred())
		return -1;
	/* A type not met before: _arrays decides what it is (and
	 * remembers it in kinds). */
	PyObject *decided = NULL;
	if (!k && !(k = decided = PyObject_CallFunctionObjArgs(kind_of, v,
							       NULL)))
		return -1;
	int ok = 0;
	if (k == torch_kind)
		ok = describe_torch(v, a, shape, strides, gpu);
	else if (k == PyTuple_GET_ITEM(numpy_kinds, 0))
		ok = describe_numpy(v, 1, a, shape, strides);
	else if (k == PyTuple_GET_ITEM(numpy_kinds, 1))
		ok = describe_numpy(v, 0, a, shape, strides);
	Py_XDECREF(decided);
	return ok;
}

/* Launcher.launch(args, kwargs): the kernel called with the positional
 * arguments (a tuple) and then the named ones (a dict), as
 * tilec.Kernel's call takes them.  The runtime's status (0: launched;
 * on failure tilec_error and tilec_launch_problem say why), or NOT_HERE
 * when an argument is one the ctypes path must describe (nothing was
 * launched). */
static PyObject *
launcher_launch(Launcher *self, PyObject *const *argv, Py_ssize_t argc)
{
	if (argc != 2 || !PyTuple_Check(argv[0]) || !PyDict_Check(argv[1])) {
		PyErr_SetString(PyExc_TypeError,
				"launch(args: tuple, kwargs: dict)");
		return NULL;
	}
	if (!kinds) {
		PyErr_SetString(PyExc_RuntimeError, "tilec._fast: setup() "
				"was not called");
		return NULL;
	}
	PyObject *args = argv[0], *kw = argv[1];
	Py_ssize_t npos = PyTuple_GET_SIZE(args), n = npos + PyDict_GET_SIZE(kw);
	if (n > MAX_ARGS)
		return PyLong_FromLong(NOT_HERE);
	Arg arr[MAX_ARGS];
	int64_t dims[MAX_ARGS][2][MAX_RANK];
	int gpu = -1;
	memset(arr, 0, (size_t)n * sizeof arr[0]);
	Py_ssize_t at = 0, pos = 0;
	PyObject *key, *value;
	for (Py_ssize_t i = 0; i < n; i++) {
		Arg *a = &arr[i];
		a->size = sizeof *a;
		if (i < npos) {
			value = PyTuple_GET_ITEM(args, i);
		} else {
			PyDict_Next(kw, &pos, &key, &value);
			if (!PyUnicode_Check(key))
				return PyLong_FromLong(NOT_HERE);
			/* Kept in the str, which kw holds. */
			if (!(a->name = PyUnicode_AsUTF8(key)))
				return NULL;
		}
		int g;
		int ok = describe(value, a, dims[i][0], dims[i][1], &g);
		if (ok <= 0)
			return ok < 0 ? NULL : PyLong_FromLong(NOT_HERE);
		if (gpu < 0)
			gpu = g;
		at++;
	}
	/* The current stream of the first GPU tensor's GPU (NULL, the
	 * default stream, when there is none). */
	void *stream = NULL;
	if (self->gpu && gpu >= 0) {
		PyObject *g = PyLong_FromLong(gpu);
		PyObject *s = g ? PyObject_CallFunctionObjArgs(stream_of, g,
							      NULL)
				: NULL;
		Py_XDECREF(g);
		if (!s)
			return NULL;
		stream = PyLong_AsVoidPtr(s);
		Py_DECREF(s);
		if (!stream && PyErr_Occurred())
			return NULL;
	}
	int st;
	Py_BEGIN_ALLOW_THREADS
	st = self->launch(self->kernel, arr, (int)at, stream);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(st);
}

static int
launcher_init(Launcher *self, PyObject *args, PyObject *kw)
{
	PyObject *fn, *kernel;
	int gpu;
	static char *names[] = { "launch", "kernel", "gpu", NULL };
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OOp", names, &fn, &kernel,
					 &gpu))
		return -1;
	void *f = PyLong_AsVoidPtr(fn), *k = PyLong_AsVoidPtr(kernel);
	if (PyErr_Occurred())
		return -1;
	if (!f || !k) {
		PyErr_SetString(PyExc_ValueError, "Launcher: a NULL address");
		return -1;
	}
	/* A function's address, as ctypes gives it (ISO C converts no
	 * object pointer to a function pointer: its bytes are copied). */
	memcpy(&self->launch, &f, sizeof self->launch);
	self->kernel = k;
	self->gpu = gpu;
	return 0;
}

static PyMethodDef launcher_methods[] = {
	{ "launch", (PyCFunction)(void (*)(void))launcher_launch, METH_FASTCALL,
	  "launch(args, kwargs) -> the runtime's status, or -1: not here" },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject launcher_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tilec._fast.Launcher",
	.tp_basicsize = sizeof(Launcher),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Launcher(launch, kernel, gpu): calls of one kernel "
		  "(addresses of tilec_launch_checked and the tilec_kernel)",
	.tp_methods = launcher_methods,
	.tp_init = (initproc)launcher_init,
	.tp_new = PyType_GenericNew,
};

/* setup(kinds, kind_of, torch_kind, numpy_kinds, torch_dtype,
 * numpy_dtype, stream_of): _arrays' table of kinds (filled as the ctypes
 * path fills it) and functions. */
static PyObject *
fast_setup(PyObject *mod, PyObject *args)
{
	PyObject *k, *ko, *tk, *nk, *td, *nd, *so;
	(void)mod;
	if (!PyArg_ParseTuple(args, "O!OOO!OOO", &PyDict_Type, &k, &ko, &tk,
			      &PyTuple_Type, &nk, &td, &nd, &so))
		return NULL;
	if (PyTuple_GET_SIZE(nk) != 2) {
		PyErr_SetString(PyExc_ValueError, "setup: numpy_kinds is a pair");
		return NULL;
	}
	PyObject **slots[] = { &kinds, &kind_of, &torch_kind, &numpy_kinds,
			       &torch_dtype, &numpy_dtype, &stream_of };
	PyObject *given[] = { k, ko, tk, nk, td, nd, so };
	for (size_t i = 0; i < sizeof given / sizeof given[0]; i++) {
		Py_INCREF(given[i]);
		Py_XSETREF(*slots[i], given[i]);
	}
	Py_RETURN_NONE;
}

/* arg_layout(): (sizeof, then each field's offset, in order), for the
 * package to compare with _lib.Arg. */
static PyObject *
fast_arg_layout(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	return Py_BuildValue(
		"(nnnnnnnnnnnnnn)", (Py_ssize_t)sizeof(Arg),
		(Py_ssize_t)offsetof(Arg, size), (Py_ssize_t)offsetof(Arg, name),
		(Py_ssize_t)offsetof(Arg, kind), (Py_ssize_t)offsetof(Arg, data),
		(Py_ssize_t)offsetof(Arg, dtype), (Py_ssize_t)offsetof(Arg, rank),
		(Py_ssize_t)offsetof(Arg, shape),
		(Py_ssize_t)offsetof(Arg, strides),
		(Py_ssize_t)offsetof(Arg, ivalue),
		(Py_ssize_t)offsetof(Arg, fvalue),
		(Py_ssize_t)offsetof(Arg, memory),
		(Py_ssize_t)offsetof(Arg, device),
		(Py_ssize_t)offsetof(Arg, read_only));
}

static PyMethodDef fast_methods[] = {
	{ "setup", fast_setup, METH_VARARGS,
	  "setup(kinds, kind_of, torch_kind, numpy_kinds, torch_dtype, "
	  "numpy_dtype, stream_of)" },
	{ "arg_layout", fast_arg_layout, METH_NOARGS,
	  "(sizeof tilec_arg, offsets of its fields)" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef fast_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "tilec._fast",
	.m_doc = "tilec.Kernel's calls described and launched in C",
	.m_size = -1,
	.m_methods = fast_methods,
};

PyMODINIT_FUNC
PyInit__fast(void)
{
	struct {
		PyObject **slot;
		const char *name;
	} names[] = {
		{ &s_dtype, "dtype" },
		{ &s_get_device, "get_device" },
		{ &s_is_cuda, "is_cuda" },
		{ &s_is_cpu, "is_cpu" },
		{ &s_shape, "shape" },
		{ &s_is_contiguous, "is_contiguous" },
		{ &s_stride, "stride" },
		{ &s_data_ptr, "data_ptr" },
		{ &s_array_struct, "__array_struct__" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!*names[i].slot &&
		    !(*names[i].slot = PyUnicode_InternFromString(names[i].name)))
			return NULL;
	if (PyType_Ready(&launcher_type) < 0)
		return NULL;
	PyObject *m = PyModule_Create(&fast_module);
	if (!m)
		return NULL;
	Py_INCREF(&launcher_type);
	if (PyModule_AddObject(m, "Launcher", (PyObject *)&launcher_type) < 0 ||
	    PyModule_AddIntConstant(m, "NOT_HERE", NOT_HERE) < 0) {
		Py_DECREF(&launcher_type);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
