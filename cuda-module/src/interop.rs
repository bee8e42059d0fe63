//! Checked launches on cudarc streams with cudarc memory (the `cudarc`
//! feature): [`Kernel::launch_on_stream`], [`Kernel::launch_on`] and their
//! [`Launch`] builder.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, SyncOnDrop};
use smallvec::SmallVec;

use crate::context::Context;
use crate::error::ModuleError;
use crate::kernel::Kernel;
use crate::launch::LaunchConfig;

mod sealed {
    /// Keeps [`ScalarArg`](super::ScalarArg) to cudarc's `DeviceRepr`
    /// types, whose owners vouch that every byte is initialised.
    pub trait Sealed {}
    impl<T: cudarc::driver::DeviceRepr> Sealed for T {}
}

/// A value that [`Launch::arg`] passes to a kernel by value: every type of
/// cudarc's [`DeviceRepr`] (integers, floats, `bool`, arrays of them, and
/// `#[repr(C)]` types whose owners implement `DeviceRepr` for them).
///
/// Device memory is no scalar: a `CudaSlice` or view goes through
/// [`Launch::slice`] (read) or [`Launch::slice_mut`] (written), so that
/// cudarc's events order the launch with the memory's other uses. Passing
/// one to `.arg`, as cudarc's `launch_builder` takes it, does not compile,
/// and the error says so:
///
/// ```compile_fail,E0277
/// # fn run<'a>(launch: &mut cuda_module::Launch<'a>, x: &'a cudarc::driver::CudaSlice<f32>) {
/// launch.arg(x); // `CudaSlice<f32>` is device memory: pass it with `.slice(&x)` ...
/// # }
/// ```
///
/// ```
/// # fn run<'a>(launch: &mut cuda_module::Launch<'a>, x: &'a cudarc::driver::CudaSlice<f32>) {
/// launch.slice(x).arg(&2.0f32).arg(&[1u32, 2, 3]);
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a scalar kernel argument: device memory goes through `.slice(&x)` or `.slice_mut(&mut x)`",
    label = "`.arg` passes scalars by value",
    note = "pass a `CudaSlice` or `CudaView` the kernel reads with `launch.slice(&x)`, one it writes with `launch.slice_mut(&mut x)`",
    note = "`.arg` takes the types of cudarc's `DeviceRepr`: integers, floats, `bool`, arrays of them, and `#[repr(C)]` types that implement it"
)]
#[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
pub trait ScalarArg: sealed::Sealed {}

impl<T: DeviceRepr> ScalarArg for T {}

/// One kernel argument as the builder keeps it until the launch.
enum Arg {
    /// A scalar's address and size; it outlives the builder.
    Value(*const c_void, usize),
    /// A device pointer, passed by the address of this field.
    Pointer(u64),
}

/// Arguments a launch holds without allocating; more spill to the heap.
const INLINE_ARGS: usize = 12;

/// A launch of one kernel on one cudarc stream, its arguments checked
/// against the kernel's parameters (`cuKernelGetParamInfo`, read once per
/// kernel) before anything is launched.
///
/// Device memory is taken through cudarc's [`DevicePtr`] / [`DevicePtrMut`],
/// so this stream waits for earlier writes (and, for `slice_mut`, reads) on
/// other streams, and the memory records this launch's use: cudarc's
/// ordering holds across its streams and ours.
///
/// ```no_run
/// # use std::sync::Arc;
/// # fn run(stream: Arc<cudarc::driver::CudaStream>,
/// #        saxpy: cuda_module::Kernel) -> Result<(), Box<dyn std::error::Error>> {
/// use cuda_module::LaunchConfig;
///
/// let x = stream.clone_htod(&[1.0f32; 256])?;
/// let mut y = stream.clone_htod(&[2.0f32; 256])?;
/// let (a, n) = (3.0f32, 256i32);
/// let mut launch = saxpy.launch_on_stream(&stream);
/// launch.arg(&a).slice(&x).slice_mut(&mut y).arg(&n);
/// // SAFETY: saxpy reads x and writes y within their 256 elements.
/// unsafe { launch.launch(LaunchConfig::for_elements(256, 128)) }?;
/// drop(launch); // its borrows of x and y end here
/// assert!(stream.clone_dtoh(&y)?.iter().all(|&v| v == 5.0));
/// # Ok(()) }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
pub struct Launch<'a> {
    kernel: &'a Kernel,
    /// The stream's context, as ours: the kernel's function is cached for it.
    context: Context,
    stream: &'a CudaStream,
    args: SmallVec<[Arg; INLINE_ARGS]>,
    /// Record each buffer's use on the stream when dropped, after the
    /// launch is queued (or on an error, harmlessly).
    _uses: SmallVec<[SyncOnDrop<'a>; INLINE_ARGS]>,
}

impl Kernel {
    /// A launch builder for `stream`, in the stream's own context: no
    /// [`Context`] to keep beside it.
    ///
    /// The kernel makes one [`Context`] per cudarc context it is launched
    /// in (with [`Context::from_cudarc`]) and keeps it, so that its
    /// function is looked up once per context. That keeps the cudarc
    /// context alive as long as the kernel and its [`Library`](crate::Library)
    /// (as cudarc's own `CudaFunction` keeps its context), or, once nothing
    /// else holds the cudarc context, until the kernel is launched in
    /// another one. [`launch_on`](Self::launch_on) is the same launch in a
    /// `Context` of your own.
    ///
    /// ```no_run
    /// # fn run(cubin: &cuda_module::cuda_link::ObjectCode) -> Result<(), Box<dyn std::error::Error>> {
    /// use cuda_module::{LaunchConfig, Library};
    ///
    /// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
    /// let saxpy = Library::load(cubin)?.kernel("saxpy")?;
    /// let x = stream.clone_htod(&[1.0f32; 256])?;
    /// let mut y = stream.clone_htod(&[2.0f32; 256])?;
    /// let mut launch = saxpy.launch_on_stream(&stream);
    /// launch.arg(&3.0f32).slice(&x).slice_mut(&mut y).arg(&256i32);
    /// // SAFETY: saxpy reads x and writes y within their 256 elements.
    /// unsafe { launch.launch(cudarc::driver::LaunchConfig::for_num_elems(256)) }?;
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub fn launch_on_stream<'a>(&'a self, stream: &'a CudaStream) -> Launch<'a> {
        let context = self.inner.stream_contexts.get(stream.context());
        self.launch_in(context, stream)
    }

    /// A launch builder for `stream`, which must belong to `context`
    /// (made with [`Context::from_cudarc`]); any other stream is
    /// [`ModuleError::ForeignStream`].
    /// [`launch_on_stream`](Self::launch_on_stream) takes the context from
    /// the stream.
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub fn launch_on<'a>(
        &'a self,
        context: &Context,
        stream: &'a CudaStream,
    ) -> Result<Launch<'a>, ModuleError> {
        let ours = context
            .cudarc()
            .is_some_and(|cudarc| Arc::ptr_eq(cudarc, stream.context()));
        if !ours {
            return Err(ModuleError::ForeignStream {
                kernel: self.name().to_owned(),
            });
        }
        Ok(self.launch_in(context.share(), stream))
    }

    /// The builder of both: `context` is `stream`'s.
    fn launch_in<'a>(&'a self, context: Context, stream: &'a CudaStream) -> Launch<'a> {
        Launch {
            kernel: self,
            context,
            stream,
            args: SmallVec::new(),
            _uses: SmallVec::new(),
        }
    }
}

impl<'a> Launch<'a> {
    /// A scalar argument, passed by value ([`ScalarArg`]: cudarc's
    /// `DeviceRepr` types: integers, floats, `bool`, arrays of them, and
    /// `#[repr(C)]` types their owners vouch for). Device memory goes
    /// through [`slice`](Self::slice) and [`slice_mut`](Self::slice_mut).
    pub fn arg<T: ScalarArg>(&mut self, value: &'a T) -> &mut Self {
        let address = std::ptr::from_ref(value).cast::<c_void>();
        self.args
            .push(Arg::Value(address, std::mem::size_of::<T>()));
        self
    }

    /// Device memory the kernel reads: a `CudaSlice` or `CudaView`.
    pub fn slice<T>(&mut self, memory: &'a impl DevicePtr<T>) -> &mut Self {
        let (pointer, used) = memory.device_ptr(self.stream);
        self.push_pointer(pointer, used)
    }

    /// Device memory the kernel writes: a `CudaSlice` or `CudaViewMut`.
    pub fn slice_mut<T>(&mut self, memory: &'a mut impl DevicePtrMut<T>) -> &mut Self {
        let (pointer, used) = memory.device_ptr_mut(self.stream);
        self.push_pointer(pointer, used)
    }

    fn push_pointer(&mut self, pointer: u64, used: SyncOnDrop<'a>) -> &mut Self {
        self.args.push(Arg::Pointer(pointer));
        self._uses.push(used);
        self
    }

    /// Checks the arguments against the kernel's parameters, then launches.
    ///
    /// A wrong count or size is [`ModuleError::ArgumentCount`] or
    /// [`ModuleError::ArgumentSize`], and nothing is launched. The stream's
    /// context is current only during the launch: the calling thread's
    /// current context is restored after it, whatever the outcome.
    ///
    /// # Safety
    /// As cudarc's `LaunchArgs::launch`, less what is checked here (the
    /// number of arguments and each one's size): the kernel must treat
    /// each argument as the type it was given as, stay within the bounds
    /// of every buffer, and write only to buffers passed with
    /// [`slice_mut`](Self::slice_mut). Rust cannot see inside the kernel,
    /// so these stay the caller's to vouch for.
    ///
    /// Captured into a CUDA graph (cudarc's `CudaStream::begin_capture`),
    /// the launch runs at every launch of the graph: each buffer must
    /// outlive the graph's executable graphs, as with cudarc's own
    /// launches. The code is held for the graph: this kernel's library
    /// stays loaded until the graph, every `CudaGraph` made from it and
    /// their launches are gone, even if every `Kernel` and `Library` is
    /// dropped first.
    ///
    /// `config` is our [`LaunchConfig`] or cudarc's.
    pub unsafe fn launch(&mut self, config: impl Into<LaunchConfig>) -> Result<(), ModuleError> {
        let config = config.into();
        self.check_arguments()?;
        let function = self.kernel.function(&self.context)?;
        self.kernel.note_launch(&self.context);
        let mut params: SmallVec<[*mut c_void; INLINE_ARGS]> = self
            .args
            .iter()
            .map(|arg| match arg {
                Arg::Value(address, _) => address.cast_mut(),
                Arg::Pointer(pointer) => std::ptr::from_ref(pointer).cast::<c_void>().cast_mut(),
            })
            .collect();
        // An error cudarc recorded from earlier asynchronous work comes
        // first, as cudarc's own launches report it.
        self.stream
            .context()
            .check_err()
            .map_err(ModuleError::Cudarc)?;
        // The stream's context (`self.context`'s, as `launch_on` checked and
        // `launch_on_stream` made it) is pushed for the launch and popped
        // after it, also on an error or a panic: the thread's current
        // context is left as it was.
        self.context.with_current(|| {
            // SAFETY: a function of the stream's context, now current; one
            // parameter pointer per kernel parameter, each to a value of the
            // checked size that lives until this returns; the caller vouches
            // for what the kernel does with them.
            unsafe {
                self.kernel.launch_function(
                    function,
                    self.stream.cu_stream().cast(),
                    config,
                    &mut params,
                )
            }
        })
    }

    fn check_arguments(&self) -> Result<(), ModuleError> {
        let params = self.kernel.param_info()?;
        if params.len() != self.args.len() {
            return Err(ModuleError::ArgumentCount {
                kernel: self.kernel.name().to_owned(),
                expected: params.len(),
                given: self.args.len(),
            });
        }
        for (index, (param, arg)) in params.iter().zip(&self.args).enumerate() {
            let given = match arg {
                Arg::Value(_, size) => *size,
                Arg::Pointer(_) => std::mem::size_of::<u64>(),
            };
            if given != param.size {
                return Err(ModuleError::ArgumentSize {
                    kernel: self.kernel.name().to_owned(),
                    index,
                    expected: param.size,
                    given,
                });
            }
        }
        Ok(())
    }
}
