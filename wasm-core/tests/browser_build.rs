//! The browser's wasm holds only what the browser runs. garblet-core built for
//! wasm32-unknown-unknown as the SDK builds it (ts-sdk/scripts/build-wasm.mjs: no features)
//! depends on no server crate and turns on no test or benchmark feature; and the core's sources
//! use none of the operating system's services that a browser lacks — files, sockets, threads,
//! processes — which is how server code (the service table, Bristol files read from disk) would
//! show if it crept back. Cheap: `cargo tree` reads the lock file, and the scan reads the
//! sources; nothing is built.
// Native only: it runs cargo and reads the sources.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;
use std::process::Command;

/// The crates of the SDK's wasm build, each with the features it is built with:
/// `name vX.Y.Z (…) [f1,f2]`.
fn wasm_build_tree() -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["tree", "-p", "garblet-core", "--target", "wasm32-unknown-unknown", "-e", "normal,build", "--prefix", "none", "--format", "{p} [{f}]", "--frozen"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cargo tree");
    assert!(output.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().lines().map(str::to_string).collect()
}

/// The features `crate_name` is built with, if it is in `tree`.
fn features<'t>(tree: &'t [String], crate_name: &str) -> Option<Vec<&'t str>> {
    let line = tree.iter().find(|l| l.starts_with(&format!("{crate_name} v")))?;
    let list = line.rsplit_once('[')?.1.trim_end_matches(']');
    Some(list.split(',').filter(|f| !f.is_empty()).collect())
}

#[test]
fn the_sdks_wasm_build_has_no_server_crate_and_no_test_or_benchmark_feature() {
    let tree = wasm_build_tree();
    assert_eq!(features(&tree, "garblet-core"), Some(vec![]), "the core's features in the wasm build: {tree:?}");
    let circuits = features(&tree, "garblet-circuits").expect("the circuits crate");
    assert!(!circuits.contains(&"testing"), "the circuits' testing helpers are in the wasm build");
    for crate_name in ["garblet-server", "tokio", "rustls"] {
        assert!(features(&tree, crate_name).is_none(), "{crate_name} is in the wasm build");
    }
}

#[test]
fn the_cores_sources_use_no_files_sockets_threads_or_processes() {
    let mut offending = Vec::new();
    scan(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut offending);
    assert!(offending.is_empty(), "server-side services in the core (they belong in garblet-server):\n{}", offending.join("\n"));
}

fn scan(dir: &Path, offending: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            scan(&path, offending);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if ["std::fs", "std::net", "std::thread", "std::process"].iter().any(|m| code.contains(m)) {
                    offending.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
}
