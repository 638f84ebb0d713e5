//! The Kubernetes manifests (`deploy/kubernetes/`) against the binary they run: the
//! ConfigMap holds what the container image serves and compiles clean, every variable the
//! Deployment sets is one `ferry serve` reads, and ferry run as the Deployment runs it (its
//! variables, the ConfigMap mounted as the kubelet mounts one: files behind a `..data` symlink
//! swapped whole on each update) answers its probes and reloads an edit of the ConfigMap
//! through `--watch`. The schemas themselves are checked by `scripts/render-kubernetes.py`
//! (`scripts/test.sh`).

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::observe::Ferry;
use crate::support::free_port;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(name: &str) -> Value {
    let path = root().join("deploy/kubernetes/base").join(name);
    let text = std::fs::read_to_string(&path).expect("the manifest is there");
    serde_saphyr::from_str(&text).expect("the manifest is YAML")
}

/// The ConfigMap's files, by name.
fn config_files() -> Vec<(String, String)> {
    let config = manifest("configmap.yaml");
    config["data"]
        .as_object()
        .expect("data")
        .iter()
        .map(|(name, text)| (name.clone(), text.as_str().expect("text").to_owned()))
        .collect()
}

/// The ferry container of the Deployment.
fn container() -> Value {
    let deployment = manifest("deployment.yaml");
    deployment["spec"]["template"]["spec"]["containers"][0].clone()
}

/// The variables the Deployment sets by value.
fn variables() -> Vec<(String, String)> {
    container()["env"]
        .as_array()
        .expect("env")
        .iter()
        .map(|variable| {
            (
                variable["name"].as_str().expect("name").to_owned(),
                variable["value"].as_str().expect("a value").to_owned(),
            )
        })
        .collect()
}

/// A folder laid out as the kubelet mounts a ConfigMap: each file a symlink into `..data`,
/// itself a symlink to a folder named by its time.
struct Mount {
    folder: PathBuf,
    updates: u32,
}

impl Mount {
    fn new(test: &str, files: &[(String, String)]) -> Mount {
        let folder = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kubernetes-{test}"));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).expect("a mount folder");
        let mut mount = Mount { folder, updates: 0 };
        mount.update(files);
        for (name, _) in files {
            std::os::unix::fs::symlink(format!("..data/{name}"), mount.folder.join(name))
                .expect("a file's symlink");
        }
        mount
    }

    /// Writes `files` into a new folder and swaps `..data` to it in one rename, as the
    /// kubelet's atomic writer does.
    fn update(&mut self, files: &[(String, String)]) {
        self.updates += 1;
        let version = format!(
            "..2026_01_01_00_00_{:02}.{}",
            self.updates,
            std::process::id()
        );
        std::fs::create_dir(self.folder.join(&version)).expect("a version folder");
        for (name, text) in files {
            std::fs::write(self.folder.join(&version).join(name), text).expect("a file");
        }
        let next = self.folder.join("..data_tmp");
        let _ = std::fs::remove_file(&next);
        std::os::unix::fs::symlink(&version, &next).expect("the new ..data");
        std::fs::rename(&next, self.folder.join("..data")).expect("..data swapped");
    }
}

/// `GET path` on 127.0.0.1:`port`: the status and the body.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let status = answer.split_whitespace().nth(1)?.parse().ok()?;
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    Some((status, body.to_owned()))
}

/// Polls `GET path` until `ready` holds of its answer, for at most 20 s.
fn until(port: u16, path: &str, ready: impl Fn(u16, &str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some((status, body)) = get(port, path)
            && ready(status, &body)
        {
            return body;
        }
        assert!(Instant::now() < deadline, "{path} never became as expected");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_config_map_serves_what_the_container_image_serves_and_compiles_clean() {
    let files = config_files();
    let names: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["ferry.yaml", "openapi.yaml"]);
    let read = |path: &str| std::fs::read_to_string(root().join(path)).expect("packaged file");
    assert_eq!(files[0].1, read("packaging/docker/ferry.yaml"));
    assert_eq!(files[1].1, read("packaging/example/openapi.yaml"));
    let mount = Mount::new("check", &files);
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["check", "--config"])
        .arg(mount.folder.join("ferry.yaml"))
        .env("FERRY_API_KEY_SHA256", "0".repeat(64))
        .output()
        .expect("ferry check runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn every_variable_the_deployment_sets_is_one_ferry_serve_reads() {
    let help = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--help"])
        .output()
        .expect("ferry runs");
    let help = String::from_utf8_lossy(&help.stdout);
    for (name, _) in variables() {
        assert!(
            help.contains(&format!("[env: {name}=")),
            "ferry serve reads no {name}"
        );
    }
    let container = container();
    let metrics_port = container["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .find(|port| port["name"] == "metrics")
        .and_then(|port| port["containerPort"].as_u64())
        .expect("a metrics port");
    let listen = variables()
        .into_iter()
        .find(|(name, _)| name == "FERRY_METRICS_LISTEN")
        .map(|(_, value)| value)
        .expect("--metrics-listen is set");
    assert_eq!(listen, format!("0.0.0.0:{metrics_port}"));
    for (probe, path) in [
        ("startupProbe", "/healthz"),
        ("livenessProbe", "/healthz"),
        ("readinessProbe", "/readyz"),
    ] {
        assert_eq!(container[probe]["httpGet"]["path"], path);
        assert_eq!(container[probe]["httpGet"]["port"], "metrics");
    }
    // ferry's --shutdown-timeout (30 s by default) and the preStop wait fit in the grace period.
    let deployment = manifest("deployment.yaml");
    let grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("a grace period");
    let wait = container["lifecycle"]["preStop"]["sleep"]["seconds"]
        .as_u64()
        .expect("a preStop wait");
    assert!(grace > 30 + wait, "{grace}");
}

/// ferry as the Deployment runs it: ready once the catalog is loaded, and an update of the
/// ConfigMap (its `..data` swapped) reloaded by `--watch`.
#[test]
fn run_as_deployed_ferry_is_ready_and_reloads_an_updated_config_map() {
    let files = config_files();
    let mut mount = Mount::new("watch", &files);
    let metrics = free_port();
    let mut env: Vec<(String, String)> = variables()
        .into_iter()
        .filter(|(name, _)| name != "FERRY_METRICS_LISTEN" && name != "FERRY_LOG_FORMAT")
        .collect();
    env.push((
        "FERRY_METRICS_LISTEN".into(),
        format!("127.0.0.1:{metrics}"),
    ));
    env.push((
        "FERRY_CONFIG".into(),
        mount.folder.join("ferry.yaml").display().to_string(),
    ));
    env.push(("FERRY_API_KEY_SHA256".into(), "0".repeat(64)));
    let env: Vec<(&str, &str)> = env
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    let listen = format!("127.0.0.1:{}", free_port());
    let ferry = Ferry::start(&["serve", "--listen", &listen], &env);
    until(metrics, "/healthz", |status, _| status == 200);
    until(metrics, "/readyz", |status, _| status == 200);
    until(metrics, "/metrics", |_, body| {
        body.contains("ferry_tools_served 4")
    });
    // The ConfigMap edited: one tool fewer.
    let mut edited = files.clone();
    edited[0].1 = edited[0].1.replace("  listPets: {}", "  listPets: false");
    assert_ne!(edited[0].1, files[0].1);
    mount.update(&edited);
    let after = until(metrics, "/metrics", |_, body| {
        body.contains("ferry_tools_served 3")
    });
    assert!(
        after.contains(r#"ferry_reloads_total{result="ok"} 1"#),
        "{after}"
    );
    assert!(ferry.stop(), "ferry stops cleanly on SIGTERM");
}
