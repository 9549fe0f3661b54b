//! The client's WebSocket: connecting with the hello, reading the server's messages and the
//! pongs of its own pings.

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async_with_config};

use super::ClientConfig;
use crate::error::ClientError;
use crate::protocol::{
    ClientMessage, Hello, MAX_GENERATOR_JSON_BYTES, PROTOCOL_VERSION, Resume, ServerMessage,
    Welcome,
};

pub(super) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub(super) fn ws_error(e: tokio_tungstenite::tungstenite::Error) -> ClientError {
    ClientError::WebSocket(e.to_string())
}

/// `url` with `loam serve`'s WebSocket path ([`loam_protocol::WS_PATH`]) when it names no
/// path (`ws://HOST:PORT` or `ws://HOST:PORT/`), as the and a user's examples write it.
pub(crate) fn with_default_path(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    match rest.find('/') {
        None => format!("{url}{}", loam_protocol::WS_PATH),
        Some(i) if rest[i..] == *"/" => {
            format!("{}{}", &url[..url.len() - 1], loam_protocol::WS_PATH)
        }
        Some(_) => url.to_string(),
    }
}

/// Checks the port a URL names, if it names one: the URL parser takes a port it cannot read
/// (`ws://HOST:99999`) as none, and the connection then goes to port 80, failing with a
/// "connection refused" that does not say why.
///
/// # Errors
/// [`ClientError::Config`] (`url`) naming the port.
pub(crate) fn check_port(url: &str) -> Result<(), ClientError> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    // After an IPv6 literal's `]`, or the only `:` of a name or IPv4 address.
    let port = match host_port.rsplit_once(']') {
        Some((_, after)) => after.strip_prefix(':'),
        None => host_port.split_once(':').map(|(_, p)| p),
    };
    match port {
        Some(p) if p.parse::<u16>().is_err() => Err(ClientError::Config {
            name: "url",
            why: format!("the port {p:?} in {url:?} is not a number from 0 to 65535"),
        }),
        _ => Ok(()),
    }
}

/// The connect error, with what to do when the server has nothing at the URL's path.
fn connect_error(url: &str, e: tokio_tungstenite::tungstenite::Error) -> ClientError {
    use tokio_tungstenite::tungstenite::Error;
    match &e {
        Error::Http(response) if response.status() == 404 => ClientError::WebSocket(format!(
            "nothing at {url} (HTTP 404 Not Found): `loam serve` takes clients at the path {} \
             (ws://HOST:PORT{})",
            loam_protocol::WS_PATH,
            loam_protocol::WS_PATH
        )),
        _ => ws_error(e),
    }
}

/// Connects, says hello and reads the welcome.
pub(super) async fn open(
    config: &ClientConfig,
    resume: Option<Resume>,
) -> Result<(Ws, Welcome), ClientError> {
    let max = config.max_message_bytes;
    let ws_config = WebSocketConfig::default()
        .max_message_size(Some(max))
        .max_frame_size(Some(max))
        .read_buffer_size(loam_protocol::READ_BUFFER);
    check_port(&config.url)?;
    let url = with_default_path(&config.url);
    let connect = connect_async_with_config(url.as_str(), Some(ws_config), true);
    let (mut ws, _) = tokio::time::timeout(config.timeout, connect)
        .await
        .map_err(|_| ClientError::Timeout("the connection"))?
        .map_err(|e| connect_error(&url, e))?;
    let hello = ClientMessage::Hello(Hello {
        protocol: PROTOCOL_VERSION,
        name: config.name.clone(),
        token: config.token.clone(),
        viewer: config.viewer,
        resume,
    });
    ws.send(Message::Binary(hello.encode().into()))
        .await
        .map_err(ws_error)?;
    // A generator too large for one message comes in parts first.
    let mut json = Vec::new();
    let first = loop {
        let m = tokio::time::timeout(config.timeout, next_message(&mut ws, max))
            .await
            .map_err(|_| ClientError::Timeout("the welcome"))??;
        match m {
            ServerMessage::WorldPart { bytes } => {
                if json.len() + bytes.len() > MAX_GENERATOR_JSON_BYTES {
                    return Err(ClientError::Protocol(format!(
                        "the world's generator is over {MAX_GENERATOR_JSON_BYTES} bytes"
                    )));
                }
                json.extend_from_slice(&bytes);
            }
            m => break m,
        }
    };
    match first {
        ServerMessage::Welcome(mut w) if w.protocol == PROTOCOL_VERSION => {
            if !json.is_empty() {
                if !w.world.generator_json.is_empty() {
                    return Err(ClientError::Protocol(
                        "the welcome has a generator after its parts".into(),
                    ));
                }
                w.world.generator_json = String::from_utf8(json).map_err(|_| {
                    ClientError::Protocol("the world's generator parts are not UTF-8".into())
                })?;
            }
            Ok((ws, w))
        }
        ServerMessage::Welcome(w) => Err(ClientError::Protocol(format!(
            "the server welcomed with protocol {}",
            w.protocol
        ))),
        ServerMessage::Refused(r) => Err(ClientError::Refused(r)),
        ServerMessage::Disconnect { reason } => Err(ClientError::Disconnected { reason }),
        _ => Err(ClientError::Protocol("the server did not welcome".into())),
    }
}

/// What came from the server: a message, or the answer to a [`Client::ping`].
pub(super) enum Incoming {
    Message(ServerMessage),
    Pong(u64),
}

/// The next server message; the server's pings are answered by the WebSocket layer.
async fn next_message(ws: &mut Ws, max: usize) -> Result<ServerMessage, ClientError> {
    loop {
        if let Incoming::Message(m) = next_incoming(ws, max).await? {
            return Ok(m);
        }
    }
}

/// The next server message or pong (pongs of another payload length are skipped).
pub(super) async fn next_incoming(ws: &mut Ws, max: usize) -> Result<Incoming, ClientError> {
    loop {
        match ws.next().await {
            None => {
                return Err(ClientError::Disconnected {
                    reason: "connection closed".into(),
                });
            }
            Some(Err(e)) => return Err(ws_error(e)),
            Some(Ok(Message::Binary(b))) => {
                return Ok(Incoming::Message(ServerMessage::decode(&b, max)?));
            }
            Some(Ok(Message::Pong(p))) => {
                if let Ok(p) = <[u8; 8]>::try_from(&p[..]) {
                    return Ok(Incoming::Pong(u64::from_le_bytes(p)));
                }
            }
            Some(Ok(Message::Close(f))) => {
                let reason = f
                    .map(|f| f.reason.to_string())
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(|| "no reason given".into());
                return Err(ClientError::Disconnected { reason });
            }
            Some(Ok(Message::Text(_))) => {
                return Err(ClientError::Protocol(
                    "a text message (the protocol's messages are binary MessagePack)".into(),
                ));
            }
            Some(Ok(_)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{check_port, with_default_path};

    /// A port that is not a 16-bit number is refused by name; good ports, no port and IPv6
    /// literals pass.
    #[test]
    fn a_port_out_of_range_is_named() {
        for ok in [
            "ws://127.0.0.1:7878",
            "ws://127.0.0.1:7878/ws",
            "ws://localhost/ws",
            "ws://[::1]:7878/ws",
            "ws://[::1]/ws",
            "ws://user@host:65535",
            "ws://host:0?x=1",
        ] {
            assert!(check_port(ok).is_ok(), "{ok}");
        }
        let e = check_port("ws://127.0.0.1:99999/ws").unwrap_err();
        assert_eq!(
            e.to_string(),
            crate::ClientError::Config {
                name: "url",
                why: "the port \"99999\" in \"ws://127.0.0.1:99999/ws\" is not a number from 0 to 65535"
                    .into()
            }
            .to_string()
        );
        for bad in [
            "ws://[::1]:70000",
            "ws://h:-1/ws",
            "ws://h:/ws",
            "ws://h:80x",
        ] {
            assert!(check_port(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_url_without_a_path_gets_the_servers() {
        assert_eq!(
            with_default_path("ws://127.0.0.1:7878"),
            "ws://127.0.0.1:7878/ws"
        );
        assert_eq!(
            with_default_path("ws://127.0.0.1:7878/"),
            "ws://127.0.0.1:7878/ws"
        );
        assert_eq!(with_default_path("ws://h:1/ws"), "ws://h:1/ws");
        assert_eq!(with_default_path("ws://h:1/other"), "ws://h:1/other");
        assert_eq!(
            with_default_path("wss://example.org"),
            "wss://example.org/ws"
        );
    }
}
