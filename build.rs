//! Lists each backend's migration steps from its directory (`src/store/*/migrations`), so
//! a new step is one new file: `STEPS` includes every `NNNN_name.sql` there, in order. A
//! gap or a number given twice stops the build, naming the files.

use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    for (dir, out) in [
        ("src/store/sqlite/migrations", "sqlite_steps.rs"),
        ("src/store/postgres/migrations", "postgres_steps.rs"),
    ] {
        println!("cargo::rerun-if-changed={dir}");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        names.sort();
        let mut list = String::from("&[\n");
        for (i, name) in names.iter().enumerate() {
            let number = format!("{:04}_", i + 1);
            assert!(
                name.starts_with(&number),
                "{dir}: step {} should be {number}*.sql, found {name} (steps are numbered \
                 0001, 0002, … without gaps or repeats)",
                i + 1
            );
            // The manifest's directory when the script runs, not when it was compiled: a
            // copied target directory must not include another checkout's steps.
            let path = Path::new(&manifest).join(dir).join(name);
            list.push_str(&format!(
                "    include_str!({:?}),\n",
                path.display().to_string()
            ));
        }
        list.push(']');
        let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
        std::fs::write(Path::new(&out_dir).join(out), list).expect("write the step list");
    }
}
