//! The players' presence on the ordering thread: each connected client's name, position and
//! aim, and what each client has been told of the others.
//!
//! Every change gets the next version number; a client is sent the players whose version is
//! above the last one it was sent (never itself) and the ids that left since, at most once
//! per [`PRESENCE_EVERY`]. A player whose connection is gone (left, buried as too slow,
//! replaced by nothing) is noticed at the next send and reported as left.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::protocol::{Player, PresenceReport, PresenceUpdate, ServerMessage};

/// Shortest time between two presence updates to a client (at most 10 per second).
pub(super) const PRESENCE_EVERY: Duration = Duration::from_millis(100);

/// Most players (changed or left) in one presence message: far under any message limit
/// (a player is at most about 250 bytes).
const PLAYERS_PER_MESSAGE: usize = 256;

struct Record {
    player: Player,
    version: u64,
}

/// Presence of every connected client.
#[derive(Default)]
pub(super) struct Presence {
    players: BTreeMap<u64, Record>,
    /// Client → the version at which it left.
    left: BTreeMap<u64, u64>,
    /// Client → the last version it was sent.
    seen: BTreeMap<u64, u64>,
    version: u64,
    sent_at: Option<Instant>,
}

impl Presence {
    /// Client `id` joined (or connected again) as `name` at `position` (metres): it is sent
    /// everyone at the next update, and everyone is sent it.
    pub fn join(&mut self, id: u64, name: &str, position: [f64; 3]) {
        self.version += 1;
        let aim = self.players.remove(&id).and_then(|r| r.player.aim);
        self.players.insert(
            id,
            Record {
                player: Player {
                    id,
                    name: name.to_string(),
                    position,
                    aim,
                },
                version: self.version,
            },
        );
        self.left.remove(&id);
        self.seen.insert(id, 0);
    }

    /// Client `id`'s viewer moved to `position` (metres).
    pub fn moved(&mut self, id: u64, position: [f64; 3]) {
        if let Some(r) = self.players.get_mut(&id)
            && r.player.position != position
        {
            self.version += 1;
            r.player.position = position;
            r.version = self.version;
        }
    }

    /// Client `id` reported where it is and aims (already checked).
    pub fn report(&mut self, id: u64, report: PresenceReport) {
        if let Some(r) = self.players.get_mut(&id)
            && (r.player.position != report.position || r.player.aim.as_ref() != Some(&report.aim))
        {
            self.version += 1;
            r.player.position = report.position;
            r.player.aim = Some(report.aim);
            r.version = self.version;
        }
    }

    /// The presence messages due at `now` for the clients `connected` (in id order): players
    /// not among them are reported as left first. Empty until [`PRESENCE_EVERY`] has passed
    /// since the last send.
    pub fn updates(&mut self, now: Instant, connected: &[u64]) -> Vec<(u64, Vec<Bytes>)> {
        let gone: Vec<u64> = self
            .players
            .keys()
            .filter(|id| connected.binary_search(id).is_err())
            .copied()
            .collect();
        for id in gone {
            self.version += 1;
            self.players.remove(&id);
            self.seen.remove(&id);
            self.left.insert(id, self.version);
        }
        if self
            .sent_at
            .is_some_and(|t| now.duration_since(t) < PRESENCE_EVERY)
        {
            return Vec::new();
        }
        self.sent_at = Some(now);
        let mut out = Vec::new();
        for &id in connected {
            let seen = self.seen.get(&id).copied().unwrap_or(0);
            if seen >= self.version {
                continue;
            }
            let players: Vec<Player> = self
                .players
                .iter()
                .filter(|&(&other, r)| other != id && r.version > seen)
                .map(|(_, r)| r.player.clone())
                .collect();
            let left: Vec<u64> = self
                .left
                .iter()
                .filter(|&(_, &v)| v > seen)
                .map(|(&other, _)| other)
                .collect();
            self.seen.insert(id, self.version);
            if players.is_empty() && left.is_empty() {
                continue;
            }
            out.push((id, frames(players, left)));
        }
        // A departure every connected client has been told of is forgotten.
        let oldest = connected
            .iter()
            .map(|id| self.seen.get(id).copied().unwrap_or(0))
            .min()
            .unwrap_or(u64::MAX);
        self.left.retain(|_, &mut v| v > oldest);
        out
    }
}

/// The update in messages of at most [`PLAYERS_PER_MESSAGE`] entries.
fn frames(players: Vec<Player>, left: Vec<u64>) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut players = players.into_iter().peekable();
    let mut left = left.into_iter().peekable();
    while players.peek().is_some() || left.peek().is_some() {
        let p: Vec<Player> = players.by_ref().take(PLAYERS_PER_MESSAGE).collect();
        let l: Vec<u64> = left.by_ref().take(PLAYERS_PER_MESSAGE - p.len()).collect();
        let msg = ServerMessage::Presence(PresenceUpdate {
            players: p,
            left: l,
        });
        out.push(msg.encode().into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Aim, DEFAULT_MAX_MESSAGE_BYTES};

    fn decode(frames: &[Bytes]) -> Vec<PresenceUpdate> {
        frames
            .iter()
            .map(
                |f| match ServerMessage::decode(f, DEFAULT_MAX_MESSAGE_BYTES).unwrap() {
                    ServerMessage::Presence(u) => u,
                    m => panic!("not presence: {m:?}"),
                },
            )
            .collect()
    }

    fn ids(u: &PresenceUpdate) -> Vec<u64> {
        u.players.iter().map(|p| p.id).collect()
    }

    #[test]
    fn changes_only_to_others_at_a_bounded_rate_and_departures_once() {
        let mut p = Presence::default();
        let t0 = Instant::now();
        p.join(5, "a", [0.0; 3]);
        p.join(2, "b", [1.0, 0.0, 0.0]);
        let u = p.updates(t0, &[2, 5]);
        assert_eq!(u.len(), 2);
        assert_eq!(u[0].0, 2);
        assert_eq!(ids(&decode(&u[0].1)[0]), vec![5]);
        assert_eq!(u[1].0, 5);
        assert_eq!(ids(&decode(&u[1].1)[0]), vec![2]);
        // Nothing changed: nothing sent.
        assert!(p.updates(t0 + PRESENCE_EVERY, &[2, 5]).is_empty());
        let aim = Aim {
            tool: "ball".into(),
            point: Some([3.0, 0.0, 1.0]),
            radius: 2.0,
        };
        let report = PresenceReport {
            position: [9.0, 9.0, 9.0],
            aim: aim.clone(),
        };
        p.report(5, report.clone());
        // Too soon after the last send.
        assert!(p.updates(t0 + PRESENCE_EVERY / 2, &[2, 5]).is_empty());
        let t1 = t0 + PRESENCE_EVERY * 2;
        let u = p.updates(t1, &[2, 5]);
        assert_eq!(u.len(), 1, "only 2 hears of 5's change");
        let got = decode(&u[0].1);
        assert_eq!(got[0].players[0].aim, Some(aim));
        assert_eq!(got[0].players[0].position, [9.0; 3]);
        // The same report again changes nothing.
        p.report(5, report);
        assert!(p.updates(t1 + PRESENCE_EVERY, &[2, 5]).is_empty());
        // 5's connection is gone: 2 is told once.
        let t2 = t1 + PRESENCE_EVERY * 2;
        let u = p.updates(t2, &[2]);
        assert_eq!(decode(&u[0].1)[0].left, vec![5]);
        assert!(p.left.is_empty(), "everyone knows: forgotten");
        assert!(p.updates(t2 + PRESENCE_EVERY, &[2]).is_empty());
    }

    #[test]
    fn a_large_update_splits() {
        let mut p = Presence::default();
        let all: Vec<u64> = (1..=600).collect();
        for &id in &all {
            p.join(id, "player", [id as f64, 0.0, 0.0]);
        }
        let u = p.updates(Instant::now(), &all);
        let first = decode(&u[0].1);
        assert_eq!(first.len(), 3);
        let listed: Vec<u64> = first.iter().flat_map(ids).collect();
        assert_eq!(listed, (2..=600).collect::<Vec<_>>());
    }
}
