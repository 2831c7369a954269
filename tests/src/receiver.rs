//! A webhook receiver for the tests: a real HTTP/1.1 server (hyper) on a
//! local port that records every request it gets (headers and body) and
//! answers as told: 204, a status of the test's choosing, or only after
//! a wait. It does not judge what it gets: the tests verify signatures
//! with the Standard Webhooks reference library.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use tokio::net::TcpListener;

/// How the receiver answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// 204 No Content.
    Accept,
    /// This status (a receiver that fails).
    Status(u16),
    /// 204, after this wait (a slow receiver).
    After(Duration),
}

/// A request as received.
#[derive(Clone, Debug)]
pub struct Received {
    pub headers: hyper::HeaderMap,
    pub body: Vec<u8>,
    /// How it was answered.
    pub answered: Answer,
}

impl Received {
    /// The `webhook-id` header.
    pub fn id(&self) -> String {
        self.headers
            .get("webhook-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    }
}

struct Shared {
    answer: Answer,
    received: Vec<Received>,
}

/// The receiver: running until dropped.
pub struct Receiver {
    pub addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// A receiver on a free local port.
    pub async fn start(answer: Answer) -> Receiver {
        Receiver::start_on(0, answer).await
    }

    /// A receiver on this port (0: any free one).
    pub async fn start_on(port: u16, answer: Answer) -> Receiver {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Mutex::new(Shared {
            answer,
            received: Vec::new(),
        }));
        let task = tokio::spawn(serve(listener, shared.clone()));
        Receiver { addr, shared, task }
    }

    /// Its URL, with this path.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn answer(&self, answer: Answer) {
        self.shared.lock().unwrap().answer = answer;
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.shared.lock().unwrap().received.clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A free local port, not listened on (a receiver that is down).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

async fn serve(listener: TcpListener, shared: Arc<Mutex<Shared>>) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        connections.spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let shared = shared.clone();
                async move { Ok::<_, std::convert::Infallible>(answer(request, shared).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

async fn answer(request: Request<Incoming>, shared: Arc<Mutex<Shared>>) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    let answer = shared.lock().unwrap().answer;
    if let Answer::After(wait) = answer {
        tokio::time::sleep(wait).await;
    }
    shared.lock().unwrap().received.push(Received {
        headers: parts.headers,
        body,
        answered: answer,
    });
    let status = match answer {
        Answer::Status(code) => {
            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        }
        _ => StatusCode::NO_CONTENT,
    };
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response
}
