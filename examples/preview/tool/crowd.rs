//! What the crowd examples share: their command line, the deterministic random numbers that
//! place their crowds, and the counter line with the frame time.

use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;

/// A crowd example's command line: `[N] [--screenshot OUT.png]` (`N` defaults to `count`), to
/// which an example adds its own options. clap refuses an option it does not know, with a
/// usage line and status 2.
pub fn crowd_command(
    name: &'static str,
    about: &'static str,
    count: &'static str,
) -> clap::Command {
    use clap::{Arg, Command, value_parser};
    Command::new(name)
        .about(about)
        .arg(
            Arg::new("count")
                .value_name("N")
                .value_parser(value_parser!(usize))
                .default_value(count),
        )
        .arg(
            Arg::new("screenshot")
                .long("screenshot")
                .value_name("OUT.png")
                .value_parser(value_parser!(std::path::PathBuf)),
        )
}

/// The crowd's size and the screenshot path from [`crowd_command`]'s matches.
pub fn crowd_args(m: &clap::ArgMatches) -> (usize, Option<std::path::PathBuf>) {
    (
        *m.get_one::<usize>("count").expect("defaulted"),
        m.get_one::<std::path::PathBuf>("screenshot").cloned(),
    )
}

/// A small deterministic generator (xorshift) in [0, 1): the same crowd every run.
pub fn random(state: &mut u64) -> f32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 40) as f32 / (1u64 << 24) as f32
}

/// The crowd examples' counter line, top left of the window: spawn [`counter_text`], then set the
/// text of the entity with [`Counter`].
#[derive(Component)]
pub struct Counter;

/// An empty line of text at the window's top left, marked [`Counter`].
pub fn counter_text() -> impl Bundle {
    (
        Counter,
        Text::new(""),
        TextFont::from_font_size(16.0),
        Node {
            position_type: PositionType::Absolute,
            left: Val::Px(8.0),
            top: Val::Px(6.0),
            ..default()
        },
    )
}

/// The smoothed frame time in milliseconds (0 until measured); needs
/// `FrameTimeDiagnosticsPlugin`.
pub fn frame_ms(diagnostics: &DiagnosticsStore) -> f64 {
    diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FRAME_TIME)
        .and_then(|d| d.smoothed())
        .unwrap_or(0.0)
}
