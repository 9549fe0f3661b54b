//! The joined editor's other players, in an app without a renderer: a body marker and a
//! tool sphere per player, placed from the presence the client thread reports, the sphere
//! hidden while the player aims at nothing, both gone when the player leaves.

use std::sync::Mutex;
use std::sync::mpsc;

use bevy::prelude::*;
use loam_bevy::editor::{
    Aim, BODY_RADIUS_M, Player, PlayerMarker, Remote, RemoteLink, show_players,
};

fn app() -> App {
    let (_tx, rx) = mpsc::channel();
    let link = RemoteLink {
        send: Box::new(|_| {}),
        updates: Mutex::new(rx),
    };
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
        .init_asset::<Mesh>()
        .init_asset::<StandardMaterial>()
        .insert_resource(Remote::new(link, "ws://test/ws".into()))
        .add_systems(Update, show_players);
    app
}

fn player(id: u64, position: [f64; 3], aim: Option<Aim>) -> Player {
    Player {
        id,
        name: format!("p{id}"),
        position,
        aim,
    }
}

fn set_players(app: &mut App, players: Vec<Player>) {
    app.world_mut().resource_mut::<Remote>().status.players = players;
    app.update();
}

/// Markers by kind: (marker, translation, uniform scale, visible).
fn markers(app: &mut App) -> Vec<(PlayerMarker, Vec3, f32, bool)> {
    let mut q = app
        .world_mut()
        .query::<(&PlayerMarker, &Transform, &Visibility)>();
    let mut out: Vec<_> = q
        .iter(app.world())
        .map(|(m, t, v)| (*m, t.translation, t.scale.x, *v != Visibility::Hidden))
        .collect();
    out.sort_by_key(|m| m.0);
    out
}

#[test]
fn other_players_are_shown_where_they_are_and_aim() {
    let mut app = app();
    app.update();
    assert!(markers(&mut app).is_empty(), "no players, no markers");

    let ball = Aim {
        tool: "dig / build".into(),
        point: Some([4.0, 1.0, -2.0]),
        radius: 3.0,
    };
    set_players(
        &mut app,
        vec![
            player(7, [0.0, 10.0, 0.0], Some(ball.clone())),
            player(9, [5.0, 12.0, 5.0], None),
        ],
    );
    let m = markers(&mut app);
    assert_eq!(m.len(), 4, "{m:?}");
    assert_eq!(
        m[0],
        (
            PlayerMarker::Body(7),
            Vec3::new(0.0, 10.0, 0.0),
            BODY_RADIUS_M,
            true
        )
    );
    assert_eq!(
        m[1],
        (
            PlayerMarker::Body(9),
            Vec3::new(5.0, 12.0, 5.0),
            BODY_RADIUS_M,
            true
        )
    );
    assert_eq!(
        m[2],
        (PlayerMarker::Tool(7), Vec3::new(4.0, 1.0, -2.0), 3.0, true)
    );
    assert_eq!(m[3].0, PlayerMarker::Tool(9));
    assert!(!m[3].3, "no aim reported: the tool is hidden");

    // 7 moves and aims at nothing; 9 aims with a small tool.
    let mut nothing = ball.clone();
    nothing.point = None;
    let small = Aim {
        tool: "cube".into(),
        point: Some([6.0, 0.0, 6.0]),
        radius: 1.5,
    };
    set_players(
        &mut app,
        vec![
            player(7, [1.0, 10.0, 0.0], Some(nothing)),
            player(9, [5.0, 12.0, 5.0], Some(small)),
        ],
    );
    let m = markers(&mut app);
    assert_eq!(m.len(), 4, "markers are moved, not spawned again");
    assert_eq!(m[0].1, Vec3::new(1.0, 10.0, 0.0));
    assert!(!m[2].3, "7 aims at nothing");
    assert_eq!(
        m[3],
        (PlayerMarker::Tool(9), Vec3::new(6.0, 0.0, 6.0), 1.5, true)
    );

    // 7 leaves.
    set_players(&mut app, vec![player(9, [5.0, 12.0, 5.0], None)]);
    let m = markers(&mut app);
    assert_eq!(
        m.iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![PlayerMarker::Body(9), PlayerMarker::Tool(9)]
    );
}
