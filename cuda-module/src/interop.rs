//! Checked launches on cudarc streams with cudarc memory (the `cudarc`
//! feature): [`Kernel::launch_on`] and its [`Launch`] builder.

use std::ffi::c_void;

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, SyncOnDrop};

use crate::context::Context;
use crate::error::ModuleError;
use crate::kernel::Kernel;
use crate::launch::LaunchConfig;

/// One kernel argument as the builder keeps it until the launch.
enum Arg {
    /// A scalar's address and size; it outlives the builder.
    Value(*const c_void, usize),
    /// A device pointer, at this index of `Launch::pointers`.
    Pointer(usize),
}

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
/// # fn run(stream: Arc<cudarc::driver::CudaStream>, context: cuda_module::Context,
/// #        saxpy: cuda_module::Kernel) -> Result<(), Box<dyn std::error::Error>> {
/// use cuda_module::LaunchConfig;
///
/// let x = stream.clone_htod(&[1.0f32; 256])?;
/// let mut y = stream.clone_htod(&[2.0f32; 256])?;
/// let (a, n) = (3.0f32, 256i32);
/// let mut launch = saxpy.launch_on(&context, &stream)?;
/// launch.arg(&a).slice(&x).slice_mut(&mut y).arg(&n);
/// // SAFETY: saxpy reads x and writes y within their 256 elements.
/// unsafe { launch.launch(LaunchConfig::for_elements(256, 128)) }?;
/// drop(launch); // its borrows of x and y end here
/// assert!(stream.clone_dtoh(&y)?.iter().all(|&v| v == 5.0));
/// # Ok(()) }
/// ```
pub struct Launch<'a> {
    kernel: &'a Kernel,
    context: &'a Context,
    stream: &'a CudaStream,
    args: Vec<Arg>,
    pointers: Vec<u64>,
    /// Record each buffer's use on the stream when dropped, after the
    /// launch is queued (or on an error, harmlessly).
    _uses: Vec<SyncOnDrop<'a>>,
}

impl Kernel {
    /// A launch builder for `stream`, which must belong to `context`
    /// (made with [`Context::from_cudarc`]).
    pub fn launch_on<'a>(
        &'a self,
        context: &'a Context,
        stream: &'a CudaStream,
    ) -> Result<Launch<'a>, ModuleError> {
        let ours = context
            .cudarc()
            .is_some_and(|cudarc| std::sync::Arc::ptr_eq(cudarc, stream.context()));
        if !ours {
            return Err(ModuleError::ForeignStream {
                kernel: self.name().to_owned(),
            });
        }
        Ok(Launch {
            kernel: self,
            context,
            stream,
            args: Vec::new(),
            pointers: Vec::new(),
            _uses: Vec::new(),
        })
    }
}

impl<'a> Launch<'a> {
    /// A scalar argument (`DeviceRepr`: integers, floats, `bool`, and
    /// `#[repr(C)]` types their owners vouch for).
    pub fn arg<T: DeviceRepr>(&mut self, value: &'a T) -> &mut Self {
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
        self.args.push(Arg::Pointer(self.pointers.len()));
        self.pointers.push(pointer);
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
    pub unsafe fn launch(&mut self, config: LaunchConfig) -> Result<(), ModuleError> {
        self.check_arguments()?;
        let function = self.kernel.function(self.context)?;
        let mut params: Vec<*mut c_void> = self
            .args
            .iter()
            .map(|arg| match *arg {
                Arg::Value(address, _) => address.cast_mut(),
                Arg::Pointer(index) => std::ptr::from_ref(&self.pointers[index])
                    .cast::<c_void>()
                    .cast_mut(),
            })
            .collect();
        // An error cudarc recorded from earlier asynchronous work comes
        // first, as cudarc's own launches report it.
        self.stream
            .context()
            .check_err()
            .map_err(ModuleError::Cudarc)?;
        // The stream's context (`self.context`'s, as `launch_on` checked) is
        // pushed for the launch and popped after it, also on an error or a
        // panic: the thread's current context is left as it was.
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
