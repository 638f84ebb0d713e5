//! Packaging: the Debian package `scripts/package-deb.sh` builds, read and unpacked with
//! Debian's own `dpkg-deb`, its unit checked by `systemd-analyze`, the binary under test run
//! from it; and the configurations the package and the `Dockerfile` install, which must be the
//! book's curation example (`docs/src/curating.md`) and pass `ferry check`.
//!
//! `dpkg-deb` and `systemd-analyze` come from Debian's `dpkg` and `systemd` packages, which
//! `scripts/setup-tests.sh` installs; without them these tests fail and say so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use expect_test::expect;

#[test]
fn the_debian_package_installs_the_binary_its_unit_and_a_configuration_that_checks() {
    let dpkg_deb = required_tool("dpkg-deb", "dpkg");
    let systemd_analyze = required_tool("systemd-analyze", "systemd");
    let dir = temp_dir("deb");
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));

    let built = run(Command::new(checkout.join("scripts/package-deb.sh"))
        .args(["--binary", env!("CARGO_BIN_EXE_ferry"), "--fast", "--out"])
        .arg(dir.join("out")));
    assert_success("scripts/package-deb.sh", &built);
    let deb = PathBuf::from(String::from_utf8_lossy(&built.stdout).trim());
    assert!(
        deb.is_file(),
        "the script named {deb:?}, which is not a file"
    );

    let arch = stdout_of(Command::new("dpkg").arg("--print-architecture"));
    let fields = stdout_of(Command::new(&dpkg_deb).arg("--field").arg(&deb).args([
        "Package",
        "Version",
        "Architecture",
    ]));
    assert_eq!(
        fields,
        format!(
            "Package: ferry\nVersion: {}-1\nArchitecture: {arch}",
            env!("CARGO_PKG_VERSION")
        )
    );
    let depends = stdout_of(
        Command::new(&dpkg_deb)
            .arg("--field")
            .arg(&deb)
            .arg("Depends"),
    );
    assert!(depends.contains("libc6"), "Depends: {depends}");

    let members = stdout_of(Command::new(&dpkg_deb).arg("--info").arg(&deb));
    for script in ["postinst", "prerm", "postrm"] {
        assert!(members.contains(script), "no {script} in:\n{members}");
    }
    let conffiles = stdout_of(
        Command::new(&dpkg_deb)
            .arg("--info")
            .arg(&deb)
            .arg("conffiles"),
    );
    expect![[r#"
        /etc/default/ferry
        /etc/ferry/ferry.yaml
        /etc/ferry/openapi.yaml
    "#]]
    .assert_eq(&conffiles);
    // Every file with its mode and owner (sizes and dates vary): /etc/default/ferry holds
    // secrets, so it is root's alone.
    let contents = stdout_of(Command::new(&dpkg_deb).arg("--contents").arg(&deb));
    let files: String = contents
        .lines()
        .filter(|line| line.starts_with('-'))
        .map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            format!(
                "{} {} {}\n",
                columns[0],
                columns[1],
                columns[columns.len() - 1]
            )
        })
        .collect();
    expect![[r#"
        -rw------- root/root ./etc/default/ferry
        -rw-r--r-- root/root ./etc/ferry/ferry.yaml
        -rw-r--r-- root/root ./etc/ferry/openapi.yaml
        -rw-r--r-- root/root ./lib/systemd/system/ferry.service
        -rwxr-xr-x root/root ./usr/bin/ferry
        -rw-r--r-- root/root ./usr/share/doc/ferry/copyright
    "#]]
    .assert_eq(&files);

    // postinst, prerm and postrm are at least valid sh (what they do is tried by hand: the
    // tests do not install packages on the machine).
    let control = dir.join("control");
    assert_success(
        "dpkg-deb --control",
        &run(Command::new(&dpkg_deb)
            .arg("--control")
            .arg(&deb)
            .arg(&control)),
    );
    for script in ["postinst", "prerm", "postrm"] {
        let checked = run(Command::new("sh").arg("-n").arg(control.join(script)));
        assert_success(&format!("sh -n {script}"), &checked);
    }

    let root = dir.join("root");
    assert_success(
        "dpkg-deb -x",
        &run(Command::new(&dpkg_deb).arg("-x").arg(&deb).arg(&root)),
    );
    let ferry = root.join("usr/bin/ferry");
    let version = stdout_of(Command::new(&ferry).arg("--version"));
    assert!(
        version.starts_with(&format!("ferry {} (MCP ", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    let checked = run(Command::new(&ferry)
        .arg("check")
        .arg("--config")
        .arg(root.join("etc/ferry/ferry.yaml"))
        .current_dir(&dir));
    assert_success("ferry check on the unpacked /etc/ferry", &checked);
    let report = String::from_utf8_lossy(&checked.stdout);
    assert!(
        report.contains("6 operations, 4 tools") && report.contains("0 errors, 0 warnings"),
        "{report}"
    );

    // `systemd-analyze verify` checks that ExecStart's program exists and is executable.
    // `--root` would find /usr/bin/ferry in the unpacked tree, but it also looks there for
    // every unit the service depends on (sysinit.target, network-online.target, ...), which a
    // package does not hold. So a copy of the unit with that one path pointing into the
    // unpacked tree is verified against the machine's own units.
    let unit = std::fs::read_to_string(root.join("lib/systemd/system/ferry.service"))
        .expect("read the unpacked unit");
    let exec_start = "ExecStart=/usr/bin/ferry ";
    assert_eq!(
        unit.lines()
            .filter(|line| line.starts_with(exec_start))
            .count(),
        1,
        "the unit should start /usr/bin/ferry once:\n{unit}"
    );
    let unpacked = ferry.display().to_string();
    assert!(
        !unpacked.contains(char::is_whitespace),
        "systemd would split the path {unpacked:?}: set TMPDIR to a folder without spaces"
    );
    std::fs::create_dir_all(dir.join("verify")).expect("create the verify folder");
    let copy = dir.join("verify/ferry.service");
    std::fs::write(
        &copy,
        unit.replace(exec_start, &format!("ExecStart={unpacked} ")),
    )
    .expect("write the unit copy");
    let verified = run(Command::new(&systemd_analyze).arg("verify").arg(&copy));
    assert_success("systemd-analyze verify", &verified);
    // verify exits 0 on settings it ignores (an unknown value, a misspelt key): it must say
    // nothing at all.
    assert!(
        verified.stdout.is_empty() && verified.stderr.is_empty(),
        "systemd-analyze verify warned:\n{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    // The sandbox's exposure, 0 (locked down) to 10: 1.1 with Debian 12's systemd 252. The
    // margin is for other systemd versions' weights, not for loosening the unit.
    let security = run(Command::new(&systemd_analyze)
        .args(["security", "--offline=true", "--threshold=15", "--no-pager"])
        .arg(root.join("lib/systemd/system/ferry.service")));
    let table = String::from_utf8_lossy(&security.stdout);
    assert!(
        security.status.success(),
        "systemd-analyze security rates ferry.service over 1.5; what it holds against it:\n{}",
        table
            .lines()
            .filter(|line| line.starts_with('✗') || line.contains("Overall exposure"))
            .collect::<Vec<_>>()
            .join("\n")
    );

    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_packaged_and_image_curations_are_the_books_example_and_the_image_may_listen_beyond_loopback()
{
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| {
        std::fs::read_to_string(checkout.join(path))
            .unwrap_or_else(|error| panic!("{path}: {error}"))
    };
    let chapter = read("docs/src/curating.md");
    let section = chapter
        .split_once("## The curation file\n\n```yaml\n")
        .expect(
            "docs/src/curating.md has a \"## The curation file\" section opening with a yaml block",
        )
        .1;
    let example = &section[..section.find("```").expect("the yaml block ends")];
    let installed = read("packaging/example/ferry.yaml");
    let image = read("packaging/docker/ferry.yaml");
    for (path, curation) in [
        ("packaging/example/ferry.yaml", &installed),
        ("packaging/docker/ferry.yaml", &image),
    ] {
        assert!(
            curation.contains(example),
            "{path} should hold the book's curation example as it is written"
        );
    }

    // The image listens where its ENTRYPOINT says; beyond loopback that takes an `auth:`
    // section, which the installed example (served on loopback) does not have.
    let dockerfile = read("Dockerfile");
    let entrypoint = dockerfile
        .lines()
        .find(|line| line.starts_with("ENTRYPOINT "))
        .expect("the Dockerfile has an ENTRYPOINT");
    assert_eq!(
        entrypoint,
        r#"ENTRYPOINT ["/usr/bin/ferry", "serve", "--listen", "0.0.0.0:8080"]"#
    );
    assert!(dockerfile.contains("\nUSER 65532:65532\n") && dockerfile.contains("\nEXPOSE 8080\n"));
    let parse = |text: &str| {
        let (curation, diagnostics) =
            ferry::curation::parse(text, "ferry.yaml", PathBuf::from(".")).expect("parses");
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        curation
    };
    let image_curation = parse(&image);
    assert!(ferry::auth::check_exposure("0.0.0.0:8080", image_curation.auth.as_ref()).is_ok());
    let installed_curation = parse(&installed);
    assert!(ferry::auth::check_exposure("0.0.0.0:8080", installed_curation.auth.as_ref()).is_err());

    // The image's /etc/ferry: its curation beside the example's document.
    let dir = temp_dir("image-config");
    std::fs::write(dir.join("ferry.yaml"), &image).expect("write the curation");
    std::fs::write(
        dir.join("openapi.yaml"),
        read("packaging/example/openapi.yaml"),
    )
    .expect("write the document");
    let checked = run(Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["check", "--config", "ferry.yaml"])
        .current_dir(&dir));
    assert_success("ferry check on the image's configuration", &checked);
    let report = String::from_utf8_lossy(&checked.stdout);
    assert!(
        report.contains("6 operations, 4 tools") && report.contains("0 errors, 0 warnings"),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The path of `command` on PATH; a test that needs it fails, saying how to install it.
fn required_tool(command: &str, package: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(command))
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{command} is not installed: run scripts/setup-tests.sh (as root), which \
                 installs Debian's {package} package"
            )
        })
}

fn run(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"))
}

fn stdout_of(command: &mut Command) -> String {
    let output = run(command);
    assert_success(&format!("{command:?}"), &output);
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn assert_success(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ferry-it-packaging-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}
