//! What W3C Trace Context and span export cost per call: reading a caller's `traceparent`
//! and `tracestate`, a request's context, an attempt's child header, and writing and
//! queueing a span; each with the allocations it makes, counted by a wrapping allocator.
//!
//! `cargo bench --bench trace` (release).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ferry::trace::otlp::{self, Kind, Value};
use ferry::trace::{self, Context, Endpoint, ExportOptions, TraceParent};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { System.dealloc(pointer, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACESTATE: &str = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";
const ROUNDS: u32 = 1_000_000;

#[allow(clippy::print_stdout)] // a benchmark reports on stdout
fn measure(what: &str, mut run: impl FnMut()) {
    for _ in 0..10_000 {
        run();
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    let started = Instant::now();
    for _ in 0..ROUNDS {
        run();
    }
    let elapsed = started.elapsed();
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
    println!(
        "{what:<48} {:>8.1} ns {:>6.2} allocations",
        elapsed.as_nanos() as f64 / f64::from(ROUNDS),
        allocations as f64 / f64::from(ROUNDS),
    );
}

fn main() {
    let header = http::HeaderValue::from_static(TRACEPARENT);
    let state = http::HeaderValue::from_static(TRACESTATE);
    measure("parse traceparent", || {
        black_box(TraceParent::parse(black_box(header.as_bytes())));
    });
    measure("check tracestate", || {
        black_box(trace::valid_tracestate(black_box(state.as_bytes())));
    });
    let parent = TraceParent::parse(TRACEPARENT.as_bytes());
    measure("context, continued (tracestate cloned)", || {
        black_box(Context::new(black_box(parent), Some(state.clone())));
    });
    measure("context, new trace", || {
        black_box(Context::new(None, None));
    });
    let context = Context::new(parent, Some(state.clone()));
    measure("child traceparent of an attempt", || {
        black_box(context.child());
    });
    let span = |context: &Context| {
        let attributes = [
            ("mcp.method.name", Value::Str("tools/call")),
            ("jsonrpc.request.id", Value::Str("1")),
            ("network.transport", Value::Str("tcp")),
            ("gen_ai.tool.name", Value::Str("getPet")),
            ("gen_ai.operation.name", Value::Str("execute_tool")),
        ];
        let span = otlp::Span {
            trace_id: context.trace_id,
            span_id: context.span_id,
            parent_id: context.parent_id,
            trace_state: Some(TRACESTATE),
            name: &["tools/call", " ", "getPet"],
            kind: Kind::Server,
            start_unix_nano: 1,
            end_unix_nano: trace::export::now_unix_nano(),
            attributes: &attributes,
            error: false,
            flags: 0x301,
        };
        (otlp::encode_span(&span), span.end_unix_nano)
    };
    measure("write a server span (OTLP protobuf)", || {
        black_box(span(&context));
    });

    // Export into a queue that keeps up: a collector on loopback that accepts everything.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let endpoint = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let app = axum::Router::new().route("/v1/traces", axum::routing::post(|| async { "" }));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{address}/v1/traces")
    });
    let options = ExportOptions {
        queue: 1 << 16,
        ..ExportOptions::default()
    };
    let (exporter, exporting) =
        trace::export::start(Endpoint::parse(&endpoint).expect("endpoint"), options)
            .expect("exporter");
    let attributes = [
        ("mcp.method.name", Value::Str("tools/call")),
        ("gen_ai.tool.name", Value::Str("getPet")),
    ];
    measure("export a span (write and queue)", || {
        exporter.export(&otlp::Span {
            trace_id: context.trace_id,
            span_id: context.span_id,
            parent_id: context.parent_id,
            trace_state: None,
            name: &["tools/call", " ", "getPet"],
            kind: Kind::Server,
            start_unix_nano: 1,
            end_unix_nano: 2,
            attributes: &attributes,
            error: false,
            flags: 0x301,
        });
    });
    runtime.block_on(exporting.shutdown(Duration::from_secs(30)));
    #[allow(clippy::print_stdout)]
    {
        println!(
            "exported {} spans, dropped {} (a full queue)",
            exporter.exported(),
            exporter.dropped()
        );
    }
}
