#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| garblet_fuzz::values(data));
