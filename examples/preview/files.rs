//! Open files of every format, and what the preview shows of each: its clips, info and
//! warnings.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::world_serialization::WorldAsset;
use rigplay::formats::FileFormat;
use rigplay::plugin::*;
use rigplay::skeleton::GtaGame;
use rigplay_preview::clips::{ClipRow, Pick, SortBy, pick};
use rigplay_preview::motion::motion_path;
use rigplay_preview::watch::{HotReload, OpenAsset, rooted_asset_path as asset_path};
use std::path::{Path, PathBuf};

/// The frame rate for stepping a clip whose keys do not tell one (one key per channel).
pub const DEFAULT_FPS: f32 = 30.0;

#[derive(Resource)]
pub struct Preview {
    pub files: Vec<OpenFile>,
    /// (file, clip) shown.
    pub current: Option<(usize, usize)>,
    pub wanted_clip: Option<String>,
    pub character: Option<Entity>,
    pub selected_bone: Option<Entity>,
    /// A humanoid glTF character opened (`.glb` / `.gltf`): skeletal clips play on it too,
    /// beside the stick skeleton, rest poses compensated ([`Retarget`]).
    pub body: Option<Body>,
    /// Entities to despawn (a body replaced by another).
    pub stale: Vec<Entity>,
    /// The clip list's search text and order.
    pub search: String,
    pub sort: SortBy,
    /// Scroll the clip list to the clip on show (it changed by a key or on open).
    pub reveal: bool,
    /// The clip a cross-fade went to: shown without spawning the character again.
    pub faded_to: Option<(usize, usize)>,
    /// `--bone NAME`: the bone to select once the character has it.
    pub wanted_bone: Option<String>,
    /// The selected bone's curves window is open.
    pub show_curves: bool,
    /// A GTA model opened (`.dff`, textured from the `.txd` beside it): GTA clips play on it
    /// instead of the stick skeleton, which is drawn over its skin.
    pub model: Option<Model>,
}

/// An opened `.dff` model.
pub struct Model {
    pub path: PathBuf,
    pub handle: Handle<Dff>,
    /// The game the model's file is of (`None`: it did not read), which motion files opened
    /// after it are retargeted onto.
    pub game: Option<GtaGame>,
    /// When it was opened, and whether its first frame on show has been logged.
    pub opened: std::time::Instant,
    pub shown: bool,
}

/// Lines for the Info panel about a loaded model: what it holds and what it lacks.
pub fn model_info(model: &Dff) -> (Vec<String>, Vec<String>) {
    let mut info = Vec::new();
    for (i, c) in model.clumps.iter().enumerate() {
        let meshes: usize = c.atomics.iter().map(|a| a.parts.len()).sum();
        let skinned = c.atomics.iter().filter(|a| a.skin.is_some()).count();
        info.push(format!(
            "clump {i}: {} frames, {} bones, {} atomics ({skinned} skinned, {meshes} meshes)",
            c.frames.len(),
            c.bones.len(),
            c.atomics.len()
        ));
    }
    info.push(format!(
        "{} textures from {}; bones tagged for {:?}",
        model.textures.len(),
        if model.dictionaries.is_empty() {
            "no .txd".to_owned()
        } else {
            model
                .dictionaries
                .iter()
                .map(|d| {
                    Path::new(d)
                        .file_name()
                        .map_or_else(|| d.clone(), |n| n.to_string_lossy().into_owned())
                })
                .collect::<Vec<_>>()
                .join(", ")
        },
        model.game
    ));
    let mut warnings = model.warnings.clone();
    let held: Vec<&str> = model.textures.keys().map(String::as_str).collect();
    warnings.extend(rigplay_preview::textures::missing_texture_lines(
        &model.missing_textures,
        &held,
    ));
    (info, warnings)
}

/// Selects the bone `--bone` names (case and spaces ignored) once the character has it.
pub fn select_wanted_bone(
    mut preview: ResMut<Preview>,
    children: Query<&Children>,
    names: Query<&Name, With<RigBone>>,
) {
    let (Some(wanted), Some(character)) = (preview.wanted_bone.clone(), preview.character) else {
        return;
    };
    if preview.selected_bone.is_some() {
        return;
    }
    let key = |s: &str| s.split_whitespace().collect::<String>().to_lowercase();
    let found = children
        .iter_descendants(character)
        .find(|e| names.get(*e).is_ok_and(|n| key(n.as_str()) == key(&wanted)));
    if let Some(e) = found {
        preview.selected_bone = Some(e);
    }
}

/// An opened glTF character and the entity showing it.
pub struct Body {
    pub path: PathBuf,
    pub scene: Handle<WorldAsset>,
    pub entity: Option<Entity>,
}

pub struct OpenFile {
    pub path: PathBuf,
    pub handle: FileHandle,
}

/// An open file of any format rigplay reads.
pub enum FileHandle {
    Ifp(Handle<Ifp>),
    Dan(Handle<Dan>),
    /// Drawn by the GPU plugin ([`AniePlugin`]); its [`Playback`] knows the timeline's length,
    /// so the transport and timeline drive it like a clip.
    Anie(Handle<Anie>),
    /// Animation made elsewhere (`.bvh`, `.vrma`, a glTF's animations), retargeted onto the SA
    /// ped as it loaded: its clips play like an IFP's, and "Save as…" writes the package.
    Motion(Handle<Motion>),
}

impl FileHandle {
    /// The asset's id, for its load state.
    pub fn id(&self) -> bevy::asset::UntypedAssetId {
        match self {
            FileHandle::Ifp(h) => h.id().untyped(),
            FileHandle::Dan(h) => h.id().untyped(),
            FileHandle::Anie(h) => h.id().untyped(),
            FileHandle::Motion(h) => h.id().untyped(),
        }
    }
}

/// Why a file did not load, once it has failed.
pub fn load_error(assets: &AssetServer, file: &OpenFile) -> Option<String> {
    match assets.get_load_state(file.handle.id()) {
        Some(bevy::asset::LoadState::Failed(e)) => Some(e.to_string()),
        _ => None,
    }
}

/// The clip list's rows of a file.
pub fn rows(v: &FileView) -> Vec<ClipRow> {
    v.clips
        .iter()
        .map(|c| ClipRow {
            name: c.name.clone(),
            duration: c.duration,
            keys: c.keys,
        })
        .collect()
}

/// The loaded assets of every format.
#[derive(SystemParam)]
pub struct Loaded<'w> {
    pub ifps: Res<'w, Assets<Ifp>>,
    pub dans: Res<'w, Assets<Dan>>,
    pub anies: Res<'w, Assets<Anie>>,
    pub motions: Res<'w, Assets<Motion>>,
}

impl Loaded<'_> {
    /// The IFP package a file holds: an `.ifp`'s, or the one a motion file was imported to.
    pub fn package(&self, handle: &FileHandle) -> Option<&Ifp> {
        match handle {
            FileHandle::Ifp(h) => self.ifps.get(h),
            FileHandle::Motion(h) => self.motions.get(h).map(|m| &m.ifp),
            FileHandle::Dan(_) | FileHandle::Anie(_) => None,
        }
    }
}

/// What the preview shows of a character to spawn for a clip.
#[derive(Clone)]
pub enum Character {
    Gta(GtaSkeleton),
    Flat(FlatSkeleton),
    /// An AnimeEffects project: the index of its file.
    Anie(usize),
}

/// One clip of an open file, whatever its format.
pub struct ClipEntry {
    pub name: String,
    pub duration: f32,
    /// Frames per second, for stepping and the frame number.
    pub fps: f32,
    /// The clip to play on a skeleton; `None` for a timeline of its own (AnimeEffects).
    pub handle: Option<Handle<RigClip>>,
    pub looping: bool,
    pub character: Character,
    /// Lines for the info panel.
    pub info: Vec<String>,
    /// How many keys the clip has.
    pub keys: usize,
}

/// A loaded file's clips, description and warnings; `None` while it loads (or failed).
pub struct FileView {
    pub clips: Vec<ClipEntry>,
    pub info: Vec<String>,
    pub warnings: Vec<String>,
}

pub fn view(index: usize, file: &OpenFile, loaded: &Loaded) -> Option<FileView> {
    let dans = &loaded.dans;
    match &file.handle {
        FileHandle::Anie(h) => {
            let anie = loaded.anies.get(h)?;
            let p = anie.file();
            let name = file
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Some(FileView {
                clips: vec![ClipEntry {
                    name,
                    duration: anie.duration(),
                    fps: p.fps.max(1) as f32,
                    handle: None,
                    looping: p.looping,
                    character: Character::Anie(index),
                    keys: (p.max_frame + 1) as usize,
                    info: vec![format!(
                        "frames 0..={} at {} fps, {:.3} s",
                        p.max_frame,
                        p.fps,
                        anie.duration()
                    )],
                }],
                info: vec![
                    format!(
                        "AnimeEffects project, canvas {}×{}",
                        p.canvas_width, p.canvas_height
                    ),
                    format!(
                        "{} nodes, {} image resources; drawn by the GPU (AniePlugin)",
                        p.objects.len(),
                        p.resources.iter().map(|r| r.nodes.len()).sum::<usize>()
                    ),
                ],
                warnings: anie.warnings.clone(),
            })
        }
        FileHandle::Ifp(_) | FileHandle::Motion(_) => {
            let ifp = loaded.package(&file.handle)?;
            let skeleton = GtaSkeleton(ifp.game);
            let p = &ifp.file;
            Some(FileView {
                clips: ifp
                    .clips
                    .iter()
                    .map(|c| ClipEntry {
                        name: c.name.clone(),
                        duration: c.clip.duration(),
                        fps: c.frame_rate.unwrap_or(DEFAULT_FPS),
                        handle: Some(c.handle.clone()),
                        looping: c.settings.looping,
                        character: Character::Gta(skeleton),
                        keys: c.clip.key_count(),
                        info: vec![
                            format!(
                                "clip {:?}: {} tracks, {} keys, {:.3} s",
                                c.name,
                                c.clip.tracks().len(),
                                c.clip.key_count(),
                                c.clip.duration()
                            ),
                            format!(
                                "loop {}, root motion {:?}",
                                c.settings.looping, c.settings.root_motion
                            ),
                        ],
                    })
                    .collect(),
                info: {
                    let mut info = vec![
                        format!(
                            "{} {}package {:?}",
                            p.version,
                            if p.anlf { "(ANLF) " } else { "" },
                            p.name()
                        ),
                        format!("{} clips, skeleton {:?}", ifp.clips.len(), ifp.game),
                    ];
                    if let FileHandle::Motion(h) = &file.handle
                        && let Some(m) = loaded.motions.get(h)
                    {
                        info.push("imported: retargeted onto the ped as it loaded".to_owned());
                        info.extend(m.notes.iter().cloned());
                    }
                    info
                },
                warnings: ifp.warnings.clone(),
            })
        }
        FileHandle::Dan(h) => {
            let dan = dans.get(h)?;
            let f = &dan.file;
            Some(FileView {
                clips: vec![ClipEntry {
                    name: dan.clip.name.clone(),
                    duration: dan.clip.duration(),
                    fps: dan.frame_rate.unwrap_or(DEFAULT_FPS),
                    handle: Some(dan.handle.clone()),
                    looping: dan.settings.looping,
                    character: Character::Flat(dan.skeleton()),
                    keys: dan.clip.key_count(),
                    info: vec![format!(
                        "{} bones, {} keys, {:.3} s, positions × {}",
                        f.bones.len(),
                        f.key_count(),
                        dan.clip.duration(),
                        dan.settings.scale
                    )],
                }],
                info: vec![
                    format!("DAN version {}, {:?}", f.version, f.comment_text()),
                    format!("range {}–{} ms, model-space bones", f.start_ms, f.end_ms),
                ],
                warnings: dan.warnings.clone(),
            })
        }
    }
}

/// Every file open (the clip files, the model and the glTF character), with the asset path
/// that reads it: a motion file's names the source of its ped's game
/// ([`rigplay_preview::motion`]).
fn open_assets<'a>(
    preview: &'a Preview,
    assets: &'a AssetServer,
) -> impl Iterator<Item = OpenAsset> + 'a {
    let files = preview
        .files
        .iter()
        .map(|f| match assets.get_path(f.handle.id()) {
            Some(p) => OpenAsset {
                file: f.path.clone(),
                asset_path: p.without_label().to_string(),
            },
            None => OpenAsset::at(&f.path),
        });
    let model = preview.model.as_ref().map(|m| m.path.as_path());
    let body = preview.body.as_ref().map(|b| b.path.as_path());
    files.chain(model.into_iter().chain(body).map(OpenAsset::at))
}

/// `F5`: reads every open file again (clips, the model with the `.txd` beside it, the
/// character), for a file changed in another tool. Characters keep their playheads; a file that no longer reads
/// keeps its last good version, with the error in the file list.
pub fn reload_files(
    keys: Res<ButtonInput<KeyCode>>,
    preview: Res<Preview>,
    assets: Res<AssetServer>,
) {
    if !keys.just_pressed(KeyCode::F5) {
        return;
    }
    for open in open_assets(&preview, &assets) {
        assets.reload(open.asset_path);
    }
}

/// Hot reload: the open files (with their `.meta` files, and a model's `.txd`) are the ones
/// [`reload_changed_files`] looks at, four times a second, reading each that changed on disk
/// again as `F5` does.
pub fn watch_files(preview: Res<Preview>, assets: Res<AssetServer>, mut hot: ResMut<HotReload>) {
    hot.files.clear();
    hot.files.extend(open_assets(&preview, &assets));
}

/// The asset paths the open motion files load from (each names its ped's game's source).
pub fn open_motion_paths(
    preview: &Preview,
    assets: &AssetServer,
) -> Vec<bevy::asset::AssetPath<'static>> {
    (preview.files.iter())
        .filter_map(|f| match &f.handle {
            FileHandle::Motion(h) => assets.get_path(h.id()).map(|p| p.clone_owned()),
            _ => None,
        })
        .collect()
}

/// Loads motion at `asset_path` (under the preview's root), retargeted onto `game`'s ped
/// (unless the file's `.meta` names another).
fn load_motion(assets: &AssetServer, game: GtaGame, asset_path: &str) -> Handle<Motion> {
    assets.load(motion_path(game, asset_path))
}

/// The motion files open, loaded again onto `game`'s ped (a model of that game was opened):
/// each file keeps its place in the list, and the clip on show is shown again on the model
/// once its new version has loaded.
fn retarget_motions(preview: &mut Preview, assets: &AssetServer, game: GtaGame) {
    for file in &mut preview.files {
        if let FileHandle::Motion(handle) = &mut file.handle {
            *handle = load_motion(assets, game, &asset_path(&file.path));
        }
    }
}

pub fn open(preview: &mut Preview, assets: &AssetServer, path: &Path) {
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let asset_path = asset_path(&absolute);
    let extension = absolute
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lower = extension.to_ascii_lowercase();
    // Motion is retargeted as it loads onto the ped of the model open (SA's with none, or where
    // the file's `.meta` names another); a model opened later loads it again onto its ped.
    let game = preview
        .model
        .as_ref()
        .and_then(|m| m.game)
        .unwrap_or_default();
    if matches!(lower.as_str(), "bvh" | "vrma" | "vrm") {
        preview.files.push(OpenFile {
            handle: FileHandle::Motion(load_motion(assets, game, &asset_path)),
            path: absolute,
        });
        return;
    }
    if lower == "glb" || lower == "gltf" {
        // A character: the clips on show play on it. Its own animations, if it has any, are
        // clips too, retargeted onto the SA ped.
        if let Some(old) = preview.body.take().and_then(|b| b.entity) {
            preview.stale.push(old);
        }
        preview.body = Some(Body {
            scene: assets.load(format!("{asset_path}#Scene0")),
            path: absolute.clone(),
            entity: None,
        });
        if rigplay_preview::clips::gltf_has_animations(&absolute) {
            preview.files.push(OpenFile {
                handle: FileHandle::Motion(load_motion(assets, game, &asset_path)),
                path: absolute,
            });
        }
        return;
    }
    let handle = match FileFormat::from_extension(&extension) {
        Some(FileFormat::Dff) => {
            // A model, not clips: GTA clips play on it (its .txd beside it gives the textures).
            let game = model_game(&absolute);
            preview.model = Some(Model {
                game,
                handle: assets.load(asset_path),
                path: absolute,
                opened: std::time::Instant::now(),
                shown: false,
            });
            retarget_motions(preview, assets, game.unwrap_or_default());
            return;
        }
        Some(FileFormat::Txd) => {
            warn!(
                "{}: a texture dictionary is read with the model of the same name beside it; \
                 open the .dff (or write its textures as PNGs with `rigplay txd`)",
                absolute.display()
            );
            return;
        }
        Some(FileFormat::Dan) => FileHandle::Dan(assets.load(asset_path)),
        Some(FileFormat::Anie) => FileHandle::Anie(assets.load(asset_path)),
        // IFP, and files of no known extension: the IFP loader tells what it finds.
        _ => FileHandle::Ifp(assets.load(asset_path)),
    };
    preview.files.push(OpenFile {
        path: absolute,
        handle,
    });
}

/// The game of the DFF model at `path`, as its loader picks it from the file
/// ([`GtaGame::for_dff`]); `None` where the file does not read.
fn model_game(path: &Path) -> Option<GtaGame> {
    let bytes = std::fs::read(path).ok()?;
    let dff = rigplay::formats::dff::DffFile::read(&bytes).ok()?;
    Some(GtaGame::for_dff(&dff.file))
}

pub fn open_dropped(
    mut drops: MessageReader<FileDragAndDrop>,
    mut preview: ResMut<Preview>,
    assets: Res<AssetServer>,
) {
    for d in drops.read() {
        if let FileDragAndDrop::DroppedFile { path_buf, .. } = d {
            let files = preview.files.len();
            open(&mut preview, &assets, path_buf);
            if preview.files.len() > files {
                preview.current = Some((files, 0));
            }
        }
    }
}

/// Shows the first clip once the first file has loaded; with `--clip NAME`, the clip of that
/// name in the first file (in command-line order) that has it, waiting for the files before it;
/// a name no file has ends the app with the closest names.
/// Per open file, its clips' names: `None` while it loads, none when it failed (what
/// [`rigplay_preview::clips::pick`] looks names up in).
pub fn clip_names(
    preview: &Preview,
    loaded: &Loaded,
    assets: &AssetServer,
) -> Vec<Option<Vec<String>>> {
    preview
        .files
        .iter()
        .enumerate()
        .map(|(f, file)| match view(f, file, loaded) {
            Some(v) => Some(v.clips.iter().map(|c| c.name.clone()).collect()),
            None if load_error(assets, file).is_some() => Some(Vec::new()),
            None => None,
        })
        .collect()
}

pub fn pick_first_clip(
    mut preview: ResMut<Preview>,
    loaded: Loaded,
    assets: Res<AssetServer>,
    mut exit: MessageWriter<AppExit>,
) {
    if preview.current.is_some() {
        return;
    }
    let names = clip_names(&preview, &loaded, &assets);
    match &preview.wanted_clip {
        Some(wanted) => match pick(&names, wanted) {
            ref pick @ (Pick::Missing(_) | Pick::Ambiguous(_)) => {
                let problem = pick.problem(wanted).expect("no clip found");
                error!("{problem}");
                eprintln!("error: {problem}");
                exit.write(AppExit::error());
            }
            Pick::Found(f, c) => {
                preview.current = Some((f, c));
                preview.reveal = true;
            }
            Pick::Wait => {}
        },
        None => {
            if let Some(f) = names
                .iter()
                .position(|n| n.as_ref().is_some_and(|n| !n.is_empty()))
            {
                preview.current = Some((f, 0));
                preview.reveal = true;
            }
        }
    }
}
