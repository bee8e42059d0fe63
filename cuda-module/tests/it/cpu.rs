//! What cuda-module decides before touching the driver.

use cuda_link::ObjectCode;
use cuda_module::{Library, ModuleError};

#[test]
fn ltoir_is_not_loadable() {
    let mut ltoir = vec![0xED, 0x43, 0x4E, 0x7F, 1, 0x40];
    ltoir.resize(0x40, 0);
    ltoir[0x1a..0x1c].copy_from_slice(&900u16.to_le_bytes());
    let code = ObjectCode::from_ltoir(ltoir, "k.ltoir").unwrap();
    let err = Library::load(&code).map(drop).unwrap_err();
    assert!(matches!(err, ModuleError::NotLoadable { .. }), "{err}");
    assert!(
        err.to_string().contains("link it into a cubin first"),
        "{err}"
    );
}

#[test]
fn without_a_driver_loading_is_a_typed_error() {
    if std::path::Path::new("/dev/nvidiactl").exists() {
        cuda_link_tests::skip("this machine has an NVIDIA driver; see the GPU tests");
        return;
    }
    let ptx = b".version 8.0\n.target sm_90\n.address_size 64\n".to_vec();
    let code = ObjectCode::from_ptx(ptx, "k.ptx").unwrap();
    match Library::load(&code) {
        Err(ModuleError::DriverUnavailable(err)) => {
            assert!(err.to_string().contains("libcuda"), "{err}")
        }
        Err(other) => panic!("expected DriverUnavailable, got: {other}"),
        Ok(_) => panic!("loaded without a driver"),
    }
}

#[test]
fn handles_cross_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<cuda_module::Library>();
    assert_send_sync::<cuda_module::Kernel>();
    assert_send_sync::<cuda_module::Context>();
}
