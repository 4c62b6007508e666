//! A config's `threads` (a sweep timed on one thread beside one-threaded engines) overrides the
//! lab's settings, and the run's meta records the count it ran on.

use std::path::PathBuf;

use contactlab_lab::{Lab, Settings};
use contactlab_runs::store::RunMeta;

fn root() -> PathBuf {
    let root = std::env::temp_dir().join(format!("contactlab-threads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("experiments/configs/p")).unwrap();
    root
}

#[test]
fn a_configs_threads_override_the_labs_and_the_meta_records_them() {
    let root = root();
    let lab = Lab::standard().with_root(&root).with_settings(Settings {
        threads: Some(2),
        ..Settings::default()
    });
    let config = |name: &str, threads: &str| {
        let path = root.join(format!("experiments/configs/p/{name}.toml"));
        std::fs::write(
            &path,
            format!(
                "paper = \"p\"\nname = \"{name}\"\n{threads}[scene]\nkind = \"sphere_on_plane\"\nsteps = 3\n\
                 [sweep]\nmu = [0.1, 0.2]\n\
                 [driver]\nformulation = \"coulomb\"\noptimizer = \"pgs\"\n"
            ),
        )
        .unwrap();
        path
    };
    let one = lab
        .run(&config("one", "threads = 1\n"), None, &mut Vec::new())
        .unwrap();
    let two = lab
        .run(&config("settings", ""), None, &mut Vec::new())
        .unwrap();
    assert_eq!(RunMeta::of_run(&one.path).threads, Some(1));
    assert_eq!(RunMeta::of_run(&two.path).threads, Some(2));
    assert_eq!(one.rows, two.rows, "the same sweep either way");
    std::fs::remove_dir_all(&root).unwrap();
}
