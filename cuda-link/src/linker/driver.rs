//! The driver backend: `cuLinkCreate` / `cuLinkAddData` / `cuLinkComplete`.

use std::ffi::{CString, c_void};

use cuda_driver_sys::{
    Call, Driver, driver_call,
    sys::{CUdevice_attribute, CUjit_option, CUjitInputType, CUlinkState, CUresult},
};

use super::settings::{DriverOption, Value};
use super::{
    Backend, LinkError, LinkerOptions, LiveHandle, Logs, c_input_name, c_strings, log_text,
};
use crate::arch::{Arch, ArchVariant};
use crate::kind::ObjectKind;
use crate::object_code::ObjectCode;

const LOG_SIZE: usize = 64 * 1024;

/// `sm_XY` of the device of the calling thread's current CUDA context:
/// the arch a link or a compile without one targets. `None` without a
/// driver or without a current context.
pub fn current_device_arch() -> Option<Arch> {
    let driver = Driver::global().ok()?;
    let mut context = std::ptr::null_mut();
    // SAFETY: out-pointers only.
    unsafe {
        if driver.cuCtxGetCurrent(&mut context).ok()? != CUresult::CUDA_SUCCESS || context.is_null()
        {
            return None;
        }
        let mut device = 0;
        if driver.cuCtxGetDevice(&mut device).ok()? != CUresult::CUDA_SUCCESS {
            return None;
        }
        let (mut major, mut minor) = (0, 0);
        let attr = CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
        if driver.cuDeviceGetAttribute(&mut major, attr, device).ok()? != CUresult::CUDA_SUCCESS {
            return None;
        }
        let attr = CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
        if driver.cuDeviceGetAttribute(&mut minor, attr, device).ok()? != CUresult::CUDA_SUCCESS {
            return None;
        }
        Some(Arch::sm(u32::try_from(major * 10 + minor).ok()?))
    }
}

/// `CU_JIT_TARGET` value for an arch.
fn jit_target(arch: Arch) -> u32 {
    // cuda.h: CU_COMPUTE_ACCELERATED_TARGET_BASE and CU_COMPUTE_FAMILY_TARGET_BASE.
    match arch.variant {
        ArchVariant::Base => arch.sm,
        ArchVariant::Specific => 0x10000 + arch.sm,
        ArchVariant::Family => 0x20000 + arch.sm,
    }
}

/// Option keys and values as `cuLinkCreate` takes them: scalars are passed
/// in the pointer-sized value itself.
struct JitOptions {
    keys: Vec<CUjit_option>,
    values: Vec<*mut c_void>,
    info_log: Vec<u8>,
    error_log: Vec<u8>,
    _names: Vec<CString>,
    _name_ptrs: Vec<Vec<*const std::ffi::c_char>>,
}

impl JitOptions {
    fn scalar(&mut self, key: CUjit_option, value: usize) {
        self.keys.push(key);
        self.values.push(std::ptr::without_provenance_mut(value));
    }

    fn names(
        &mut self,
        key: CUjit_option,
        count_key: CUjit_option,
        option: &'static str,
        names: &[String],
    ) -> Result<(), LinkError> {
        if names.is_empty() {
            return Ok(());
        }
        let owned = c_strings(names, option)?;
        let mut ptrs: Vec<*const std::ffi::c_char> = owned.iter().map(|n| n.as_ptr()).collect();
        self.keys.push(key);
        self.values.push(ptrs.as_mut_ptr().cast());
        self.scalar(count_key, names.len());
        self._names.extend(owned);
        self._name_ptrs.push(ptrs);
        Ok(())
    }

    fn new(options: &LinkerOptions, arch: Arch, lto: bool) -> Result<Self, LinkError> {
        let mut jit = JitOptions {
            keys: Vec::new(),
            values: Vec::new(),
            info_log: vec![0; LOG_SIZE],
            error_log: vec![0; LOG_SIZE],
            _names: Vec::new(),
            _name_ptrs: Vec::new(),
        };
        let info_ptr = jit.info_log.as_mut_ptr();
        let error_ptr = jit.error_log.as_mut_ptr();
        jit.keys.push(CUjit_option::CU_JIT_INFO_LOG_BUFFER);
        jit.values.push(info_ptr.cast());
        jit.scalar(CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, LOG_SIZE);
        jit.keys.push(CUjit_option::CU_JIT_ERROR_LOG_BUFFER);
        jit.values.push(error_ptr.cast());
        jit.scalar(CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, LOG_SIZE);
        jit.scalar(CUjit_option::CU_JIT_TARGET, jit_target(arch) as usize);
        if lto {
            jit.scalar(CUjit_option::CU_JIT_LTO, 1);
        }
        for setting in options.settings() {
            match (setting.driver, setting.value) {
                (DriverOption::Key(key), Value::Switch(true)) => jit.scalar(key, 1),
                (DriverOption::Key(key), Value::Number(Some(n))) => jit.scalar(key, n as usize),
                (DriverOption::Key(key), Value::ZeroOne(Some(on))) => {
                    jit.scalar(key, usize::from(on));
                }
                (DriverOption::Value(key, value), Value::Switch(true)) => jit.scalar(key, value),
                // The driver writes the time, a float, over the value.
                (DriverOption::Output(key), Value::Switch(true)) => jit.scalar(key, 0),
                (DriverOption::Names(key, count_key), Value::List(names)) => {
                    jit.names(key, count_key, setting.name, names)?;
                }
                (DriverOption::Unsupported, value) if value.is_set() => {
                    return Err(LinkError::UnsupportedOption {
                        option: setting.name,
                        backend: Backend::Driver.name(),
                    });
                }
                _ => {}
            }
        }
        Ok(jit)
    }

    fn logs(&self) -> Logs {
        (log_text(&self.info_log), log_text(&self.error_log))
    }
}

/// Owns a `CUlinkState`; destroys it on every path.
struct State<'a> {
    driver: &'a Driver,
    raw: CUlinkState,
    _live: LiveHandle,
}

impl<'a> State<'a> {
    fn new(driver: &'a Driver, raw: CUlinkState) -> Self {
        State {
            driver,
            raw,
            _live: LiveHandle::new(),
        }
    }
}

impl Drop for State<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` came from cuLinkCreate and is destroyed once.
        let _ = unsafe { self.driver.cuLinkDestroy(self.raw) };
    }
}

fn input_type(kind: ObjectKind) -> CUjitInputType {
    match kind {
        ObjectKind::Cubin => CUjitInputType::CU_JIT_INPUT_CUBIN,
        ObjectKind::Ptx => CUjitInputType::CU_JIT_INPUT_PTX,
        ObjectKind::Fatbin => CUjitInputType::CU_JIT_INPUT_FATBINARY,
        ObjectKind::Object => CUjitInputType::CU_JIT_INPUT_OBJECT,
        ObjectKind::Archive => CUjitInputType::CU_JIT_INPUT_LIBRARY,
        // Refused in Linker::add; NVVM is the closest, and the driver fails it.
        ObjectKind::Ltoir | ObjectKind::NvvmIr => CUjitInputType::CU_JIT_INPUT_NVVM,
    }
}

pub(super) fn link(
    driver: &'static Driver,
    options: &LinkerOptions,
    arch: Arch,
    lto: bool,
    inputs: &[ObjectCode],
) -> Result<(Vec<u8>, Logs), LinkError> {
    let mut context = std::ptr::null_mut();
    // SAFETY: an out-pointer.
    let current =
        unsafe { driver.cuCtxGetCurrent(&mut context) }.unwrap_or(CUresult::CUDA_ERROR_NOT_FOUND);
    if current != CUresult::CUDA_SUCCESS || context.is_null() {
        return Err(LinkError::NoCurrentContext);
    }
    let mut jit = JitOptions::new(options, arch, lto)?;
    let names: Vec<String> = inputs.iter().map(|i| i.name().to_owned()).collect();
    let fail = |jit: &JitOptions, call: Call, input: Option<&str>| {
        let (info_log, error_log) = jit.logs();
        LinkError::Driver {
            call: call.symbol,
            error: driver.error(call.result),
            input: input.map(str::to_owned),
            inputs: names.clone(),
            error_log,
            info_log,
        }
    };
    let unavailable = LinkError::from;

    let mut raw: CUlinkState = std::ptr::null_mut();
    // SAFETY: matching key and value arrays that outlive the state (the log
    // buffers are written until cuLinkDestroy), and an out-pointer.
    let created = unsafe {
        driver_call!(
            driver,
            cuLinkCreate_v2(
                jit.keys.len() as u32,
                jit.keys.as_mut_ptr(),
                jit.values.as_mut_ptr(),
                &mut raw,
            )
        )
    }
    .map_err(unavailable)?;
    if created.result != CUresult::CUDA_SUCCESS {
        return Err(fail(&jit, created, None));
    }
    let state = State::new(driver, raw);

    for input in inputs {
        let bytes = input.image().as_bytes();
        let name = c_input_name(input);
        // SAFETY: a live state; a buffer whose ELF tables and ranges lie
        // inside it and whose PTX ends in a NUL (what the driver reads
        // without a size), and a C-string name, alive for the call; no
        // per-input options. Contents are the driver's to interpret.
        let added = unsafe {
            driver_call!(
                driver,
                cuLinkAddData_v2(
                    state.raw,
                    input_type(input.kind()),
                    bytes.as_ptr() as *mut c_void,
                    bytes.len(),
                    name.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            )
        }
        .map_err(unavailable)?;
        if added.result != CUresult::CUDA_SUCCESS {
            return Err(fail(&jit, added, Some(input.name())));
        }
    }

    let mut cubin: *mut c_void = std::ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: out-pointers; the cubin stays owned by the state.
    let completed =
        unsafe { driver_call!(driver, cuLinkComplete(state.raw, &mut cubin, &mut size)) }
            .map_err(unavailable)?;
    if completed.result != CUresult::CUDA_SUCCESS || cubin.is_null() {
        return Err(fail(&jit, completed, None));
    }
    // SAFETY: the driver returned `size` readable bytes, valid until
    // cuLinkDestroy, which runs after this copy.
    let bytes = unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) }.to_vec();
    let logs = jit.logs();
    drop(state);
    Ok((bytes, logs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Isolation;
    use crate::linker::options::tests::every_option_set;

    /// `options` with every option the driver cannot honour back at its
    /// default, except `keep`.
    fn without_unsupported(mut options: LinkerOptions, keep: Option<&str>) -> LinkerOptions {
        for name in [
            "ptx",
            "ptx_isa",
            "ptxas_options",
            "split_compile",
            "split_compile_extended",
        ]
        .into_iter()
        .chain(["extra_flags", "isolation", "targets"])
        .filter(|name| Some(*name) != keep)
        {
            match name {
                "ptx" => options.ptx = false,
                "ptx_isa" => options.ptx_isa = None,
                "ptxas_options" => options.ptxas_options.clear(),
                "split_compile" => options.split_compile = None,
                "split_compile_extended" => options.split_compile_extended = None,
                "extra_flags" => options.extra_flags.clear(),
                "isolation" => options.isolation = Isolation::InProcess,
                "targets" => options.targets.clear(),
                _ => unreachable!(),
            }
        }
        options
    }

    /// Each option reaches `cuLink*` as its `CU_JIT_*` key, or is refused
    /// with an `UnsupportedOption` naming it: none is dropped.
    #[test]
    fn every_option_reaches_the_driver_or_is_refused() {
        let every = every_option_set();
        let supported = without_unsupported(every.clone(), None);
        let jit = JitOptions::new(&supported, Arch::sm(90), true).unwrap();
        assert!(jit.keys.contains(&CUjit_option::CU_JIT_TARGET));
        assert!(jit.keys.contains(&CUjit_option::CU_JIT_LTO));
        for setting in every.settings() {
            match setting.driver {
                DriverOption::Key(key)
                | DriverOption::Value(key, _)
                | DriverOption::Output(key)
                | DriverOption::Names(key, _) => {
                    assert!(jit.keys.contains(&key), "{} not passed", setting.name);
                }
                DriverOption::Unsupported => {
                    let alone = without_unsupported(every.clone(), Some(setting.name));
                    let refused = JitOptions::new(&alone, Arch::sm(90), false)
                        .err()
                        .or_else(|| alone.check_driver_options().err());
                    assert!(
                        matches!(
                            refused,
                            Some(LinkError::UnsupportedOption { option, .. }) if option == setting.name
                        ),
                        "{} is neither passed nor refused: {refused:?}",
                        setting.name
                    );
                }
                DriverOption::Resolved | DriverOption::NotAnOption => {}
            }
        }
    }
}
