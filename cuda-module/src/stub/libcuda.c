/* A stand-in for libcuda, for cuda-module's unit tests (src/stub/mod.rs
 * builds it with `cc -shared`). Each entry point has the signature cuda.h
 * gives it; handles are plain allocations.
 *
 * - Contexts are kept as the driver keeps them: a stack per thread, which
 *   cuCtxPush/Pop/Set/GetCurrent and cuCtxCreate/Destroy act on as the
 *   driver documents.
 * - A module belongs to the context current at cuModuleLoadDataEx; a
 *   function to the context it was made in, and cuLaunchKernel refuses it
 *   in any other.
 * - Every entry point that may load and compile code under lazy loading
 *   calls the hook that stub_set_hook installs, on the calling thread, so
 *   that a test can see which locks the caller holds.
 * - Kernels behave by name: "endless" reports parameters forever,
 *   "fails_launch" fails cuLaunchKernel, "missing" is not found; the
 *   others have four 8-byte parameters.
 * - Every global but "missing" is 4 bytes at its context's id << 16: the
 *   library's in the current context, the module's in its own.
 * - The stream STUB_CAPTURING (0xCA97) is being captured into one graph;
 *   no other stream is. The user objects the graph retains are destroyed
 *   by stub_destroy_graph, as the driver destroys them with the graph.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned int CUresult;
enum {
    SUCCESS = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    INVALID_DEVICE = 101,
    INVALID_CONTEXT = 201,
    INVALID_HANDLE = 400,
    NOT_FOUND = 500,
    LAUNCH_OUT_OF_RESOURCES = 701,
};

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct context {
    CUdevice device;
    unsigned long long id;
    int destroyed;
} *CUcontext;
/* A library (home == NULL) or a module, and the context it belongs to. */
typedef struct library {
    CUcontext home;
} *CUlibrary, *CUmodule;
/* A kernel (context == NULL) or a function of one context. */
typedef struct symbol {
    char name[64];
    CUcontext context;
} *CUkernel, *CUfunction;

#define DEVICES 4
#define DEPTH 64

static struct context primaries[DEVICES] = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 4, 0}};
static atomic_ullong next_id = 100;
static _Thread_local CUcontext stack[DEPTH];
static _Thread_local int depth;
static _Thread_local CUcontext last_launch;
static _Thread_local int synchronizations;

typedef void (*hook_fn)(const char *call);
static hook_fn hook;

/* Installed once, before any other thread calls in. */
void stub_set_hook(hook_fn f) { hook = f; }
/* This thread's context stack depth. */
int stub_depth(void) { return depth; }
/* The context current at this thread's last cuLaunchKernel. */
CUcontext stub_last_launch_context(void) { return last_launch; }
/* How many cuCtxSynchronize calls this thread made. */
int stub_synchronizations(void) { return synchronizations; }

static void may_compile(const char *call)
{
    if (hook)
        hook(call);
}

static CUcontext current(void) { return depth ? stack[depth - 1] : NULL; }

CUresult cuInit(unsigned int flags)
{
    (void)flags;
    return SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
    *version = 12090;
    return SUCCESS;
}

static const char *error_name(CUresult result)
{
    switch (result) {
    case SUCCESS: return "CUDA_SUCCESS";
    case INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
    case NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case LAUNCH_OUT_OF_RESOURCES: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    default: return NULL;
    }
}

CUresult cuGetErrorName(CUresult result, const char **name)
{
    *name = error_name(result);
    return *name ? SUCCESS : INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult result, const char **text)
{
    *text = error_name(result) ? "the stub driver says so" : NULL;
    return *text ? SUCCESS : INVALID_VALUE;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (ordinal < 0 || ordinal >= DEVICES)
        return INVALID_DEVICE;
    *device = ordinal;
    return SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    *count = DEVICES;
    return SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device)
{
    if (device < 0 || device >= DEVICES)
        return INVALID_DEVICE;
    *context = &primaries[device];
    return SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device)
{
    return device < 0 || device >= DEVICES ? INVALID_DEVICE : SUCCESS;
}

/* Pushes the new context, as cuCtxCreate does. */
CUresult cuCtxCreate_v4(CUcontext *context, void *params, unsigned int flags, CUdevice device)
{
    (void)params;
    (void)flags;
    if (device < 0 || device >= DEVICES)
        return INVALID_DEVICE;
    if (depth == DEPTH)
        return OUT_OF_MEMORY;
    CUcontext created = calloc(1, sizeof *created);
    if (!created)
        return OUT_OF_MEMORY;
    created->device = device;
    created->id = atomic_fetch_add(&next_id, 1);
    stack[depth++] = created;
    *context = created;
    return SUCCESS;
}

/* Pops it if it is current; never freed, so no address is reused. */
CUresult cuCtxDestroy_v2(CUcontext context)
{
    if (!context || context->destroyed)
        return INVALID_CONTEXT;
    context->destroyed = 1;
    if (current() == context)
        depth--;
    return SUCCESS;
}

/* Replaces the top of the stack; NULL pops it. */
CUresult cuCtxSetCurrent(CUcontext context)
{
    if (context && context->destroyed)
        return INVALID_CONTEXT;
    if (!context) {
        if (depth)
            depth--;
    } else if (depth) {
        stack[depth - 1] = context;
    } else {
        stack[depth++] = context;
    }
    return SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *context)
{
    *context = current();
    return SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext context)
{
    if (!context || context->destroyed)
        return INVALID_CONTEXT;
    if (depth == DEPTH)
        return OUT_OF_MEMORY;
    stack[depth++] = context;
    return SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *context)
{
    if (!depth)
        return INVALID_CONTEXT;
    CUcontext popped = stack[--depth];
    if (context)
        *context = popped;
    return SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
    synchronizations++;
    return current() ? SUCCESS : INVALID_CONTEXT;
}

CUresult cuCtxGetId(CUcontext context, unsigned long long *id)
{
    if (!context)
        context = current();
    if (!context || context->destroyed)
        return INVALID_CONTEXT;
    *id = context->id;
    return SUCCESS;
}

static CUresult load(struct library **out, CUcontext home)
{
    struct library *loaded = calloc(1, sizeof *loaded);
    if (!loaded)
        return OUT_OF_MEMORY;
    loaded->home = home;
    *out = loaded;
    return SUCCESS;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, int *jit_options,
                           void **jit_values, unsigned int jit_count, int *library_options,
                           void **library_values, unsigned int library_count)
{
    (void)jit_options, (void)jit_values, (void)jit_count;
    (void)library_options, (void)library_values, (void)library_count;
    may_compile("cuLibraryLoadData");
    return code ? load(library, NULL) : INVALID_VALUE;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int count, int *options,
                            void **values)
{
    (void)count, (void)options, (void)values;
    may_compile("cuModuleLoadDataEx");
    if (!current())
        return INVALID_CONTEXT;
    return image ? load(module, current()) : INVALID_VALUE;
}

CUresult cuLibraryUnload(CUlibrary library)
{
    free(library);
    return SUCCESS;
}

CUresult cuModuleUnload(CUmodule module)
{
    free(module);
    return SUCCESS;
}

static CUresult symbol(struct symbol **out, const char *name, CUcontext context)
{
    if (strlen(name) >= sizeof((struct symbol *)0)->name)
        return INVALID_VALUE;
    if (!strcmp(name, "missing"))
        return NOT_FOUND;
    struct symbol *found = calloc(1, sizeof *found);
    if (!found)
        return OUT_OF_MEMORY;
    strcpy(found->name, name);
    found->context = context;
    *out = found;
    return SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name)
{
    may_compile("cuLibraryGetKernel");
    if (!library || library->home)
        return INVALID_HANDLE;
    return symbol(kernel, name, NULL);
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
    may_compile("cuModuleGetFunction");
    if (!module || !module->home)
        return INVALID_HANDLE;
    return symbol(function, name, module->home);
}

CUresult cuKernelGetFunction(CUfunction *function, CUkernel kernel)
{
    may_compile("cuKernelGetFunction");
    if (!current())
        return INVALID_CONTEXT;
    return symbol(function, kernel->name, current());
}

static CUresult global(CUdeviceptr *pointer, size_t *size, const char *name, CUcontext context)
{
    if (!context)
        return INVALID_CONTEXT;
    if (!strcmp(name, "missing"))
        return NOT_FOUND;
    *pointer = context->id << 16;
    *size = 4;
    return SUCCESS;
}

CUresult cuLibraryGetGlobal(CUdeviceptr *pointer, size_t *size, CUlibrary library, const char *name)
{
    may_compile("cuLibraryGetGlobal");
    if (!library || library->home)
        return INVALID_HANDLE;
    return global(pointer, size, name, current());
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *pointer, size_t *size, CUmodule module, const char *name)
{
    may_compile("cuModuleGetGlobal_v2");
    if (!module || !module->home)
        return INVALID_HANDLE;
    return global(pointer, size, name, module->home);
}

CUresult cuKernelGetAttribute(int *value, int attribute, CUkernel kernel, CUdevice device)
{
    (void)kernel, (void)device;
    may_compile("cuKernelGetAttribute");
    *value = 1000 + attribute;
    return SUCCESS;
}

CUresult cuFuncGetAttribute(int *value, int attribute, CUfunction function)
{
    (void)function;
    may_compile("cuFuncGetAttribute");
    *value = 1000 + attribute;
    return SUCCESS;
}

CUresult cuKernelSetAttribute(int attribute, int value, CUkernel kernel, CUdevice device)
{
    (void)attribute, (void)value, (void)kernel, (void)device;
    may_compile("cuKernelSetAttribute");
    return SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction function, int attribute, int value)
{
    (void)function, (void)attribute, (void)value;
    may_compile("cuFuncSetAttribute");
    return SUCCESS;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction function,
                                                     int block_size, size_t shared)
{
    (void)function, (void)block_size, (void)shared;
    may_compile("cuOccupancyMaxActiveBlocksPerMultiprocessor");
    *blocks = 8;
    return SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction function,
                                          size_t (*shared_for_block)(int), size_t shared,
                                          int block_limit)
{
    (void)function, (void)shared_for_block, (void)shared, (void)block_limit;
    may_compile("cuOccupancyMaxPotentialBlockSize");
    *min_grid = 132;
    *block = 1024;
    return SUCCESS;
}

static CUresult param_info(const struct symbol *of, size_t index, size_t *offset, size_t *size)
{
    if (index >= 4 && strcmp(of->name, "endless"))
        return INVALID_VALUE;
    *offset = index * 8;
    *size = 8;
    return SUCCESS;
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t *offset, size_t *size)
{
    may_compile("cuKernelGetParamInfo");
    return param_info(kernel, index, offset, size);
}

CUresult cuFuncGetParamInfo(CUfunction function, size_t index, size_t *offset, size_t *size)
{
    may_compile("cuFuncGetParamInfo");
    return param_info(function, index, offset, size);
}

CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                        unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                        unsigned int block_z, unsigned int shared, void *stream, void **params,
                        void **extra)
{
    (void)grid_x, (void)grid_y, (void)grid_z, (void)block_x, (void)block_y, (void)block_z;
    (void)shared, (void)stream, (void)params, (void)extra;
    last_launch = current();
    if (!last_launch)
        return INVALID_CONTEXT;
    if (!function || function->context != last_launch)
        return INVALID_HANDLE;
    return strcmp(function->name, "fails_launch") ? SUCCESS : LAUNCH_OUT_OF_RESOURCES;
}

/* Stream capture: one capturing stream, one graph. */
#define STUB_CAPTURING ((void *)0xCA97)
#define MAX_HELD 256
typedef struct user_object {
    void *ptr;
    void (*destroy)(void *);
} *CUuserObject;
static struct user_object *held[MAX_HELD];
static int held_count;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static char the_graph;

CUresult cuStreamGetCaptureInfo_v3(void *stream, int *status, unsigned long long *id,
                                   void **graph, const void **dependencies, const void **edges,
                                   size_t *count)
{
    int capturing = stream == STUB_CAPTURING;
    if (!status)
        return INVALID_VALUE;
    *status = capturing;
    if (id)
        *id = capturing ? 1 : 0;
    if (graph)
        *graph = capturing ? &the_graph : NULL;
    if (dependencies)
        *dependencies = NULL;
    if (edges)
        *edges = NULL;
    if (count)
        *count = 0;
    return SUCCESS;
}

CUresult cuUserObjectCreate(CUuserObject *out, void *ptr, void (*destroy)(void *),
                            unsigned int initial, unsigned int flags)
{
    if (!out || !destroy || initial != 1 || flags != 1)
        return INVALID_VALUE;
    struct user_object *object = calloc(1, sizeof *object);
    if (!object)
        return OUT_OF_MEMORY;
    object->ptr = ptr;
    object->destroy = destroy;
    *out = object;
    return SUCCESS;
}

CUresult cuUserObjectRelease(CUuserObject object, unsigned int count)
{
    if (!object || count != 1)
        return INVALID_VALUE;
    object->destroy(object->ptr);
    free(object);
    return SUCCESS;
}

CUresult cuGraphRetainUserObject(void *graph, CUuserObject object, unsigned int count,
                                 unsigned int flags)
{
    if (graph != &the_graph || !object || count != 1 || flags != 1)
        return INVALID_VALUE;
    pthread_mutex_lock(&held_lock);
    CUresult result = held_count < MAX_HELD ? SUCCESS : OUT_OF_MEMORY;
    if (result == SUCCESS)
        held[held_count++] = object;
    pthread_mutex_unlock(&held_lock);
    return result;
}

/* Destroys the graph: each retained object's destructor runs; how many. */
int stub_destroy_graph(void)
{
    pthread_mutex_lock(&held_lock);
    int count = held_count;
    for (int i = 0; i < held_count; i++) {
        held[i]->destroy(held[i]->ptr);
        free(held[i]);
    }
    held_count = 0;
    pthread_mutex_unlock(&held_lock);
    return count;
}
