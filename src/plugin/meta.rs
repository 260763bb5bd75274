//! Forgiving `.meta` settings: a loader's settings read every field they understand and keep
//! the default for each one they do not, instead of failing the whole asset.
//!
//! Bevy reads an asset's `.meta` file before it calls the loader, and a settings type derived
//! with serde refuses the whole file over one misspelt field or one value of the wrong type:
//! the asset then does not load at all. rigplay's loader settings deserialize field by field
//! ([`lenient_settings!`]): a field whose value does not fit keeps its default, an unknown field
//! is skipped, and each is recorded as a [`MetaProblem`]. The loader logs every problem as an
//! error naming the `.meta` file and the field, and adds it to the asset's warnings (the preview
//! lists them), then loads the asset with the settings it could read.
//!
//! What stays Bevy's: a `.meta` file that is not RON at all, or whose outer frame
//! (`meta_format_version`, `asset: Load(loader: …)`) is broken, fails before any loader runs;
//! Bevy logs that error with the file's path and the asset does not load.

use bevy::asset::LoadContext;
use bevy::log::error;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// One field of a `.meta` file's settings that was not used: the value did not fit the field,
/// or no field has that name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaProblem {
    /// The field's path in the settings: `scale`, `clips."walk"`.
    pub field: String,
    /// What went wrong and what was used instead.
    pub message: String,
}

impl fmt::Display for MetaProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "settings field `{}`: {}", self.field, self.message)
    }
}

/// The problems found while reading a loader's settings from a `.meta` file; empty for settings
/// made in code. Not written back when settings are serialized.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaProblems(pub Vec<MetaProblem>);

impl MetaProblems {
    /// Whether every field was read.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A value that does not fit `field`; `instead` says what is used.
    pub(crate) fn bad(
        &mut self,
        field: String,
        expected: &str,
        found: &MetaValue,
        instead: String,
    ) {
        self.0.push(MetaProblem {
            field,
            message: format!("expected {expected}, found {found}; {instead}"),
        });
    }

    /// A field no setting has.
    pub(crate) fn unknown(&mut self, field: String, known: &[&str]) {
        self.0.push(MetaProblem {
            field,
            message: format!(
                "no such setting (the settings are {}); ignored",
                known.join(", ")
            ),
        });
    }
}

/// Logs each problem as an error naming the `.meta` file, and returns them as warning lines for
/// the asset.
pub(crate) fn log_meta_problems(context: &LoadContext, problems: &MetaProblems) -> Vec<String> {
    problems
        .0
        .iter()
        .map(|p| {
            let line = format!("{}.meta: {p}", context.path());
            error!("{line}");
            line
        })
        .collect()
}

/// Any value of a `.meta` file, kept to say what a field held. Enum variants arrive as their
/// name (`Nope`) or as a map from the name to the content (`{Extract: {z: 3}}`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MetaValue {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Unit,
    Option(Option<Box<MetaValue>>),
    Seq(Vec<MetaValue>),
    Map(Vec<(MetaValue, MetaValue)>),
}

impl fmt::Display for MetaValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaValue::Bool(b) => write!(f, "{b}"),
            MetaValue::Int(i) => write!(f, "{i}"),
            MetaValue::Float(x) => write!(f, "{x:?}"),
            MetaValue::Str(s) => write!(f, "{s:?}"),
            MetaValue::Unit => write!(f, "()"),
            MetaValue::Option(None) => write!(f, "None"),
            MetaValue::Option(Some(v)) => write!(f, "Some({v})"),
            MetaValue::Seq(items) => {
                write!(f, "[")?;
                for (i, v) in items.iter().enumerate() {
                    write!(f, "{}{v}", if i > 0 { ", " } else { "" })?;
                }
                write!(f, "]")
            }
            MetaValue::Map(entries) => {
                write!(f, "{{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    match k {
                        // Field and variant names print as RON writes them: bare.
                        MetaValue::Str(s) if is_identifier(s) => write!(f, "{sep}{s}: {v}")?,
                        _ => write!(f, "{sep}{k}: {v}")?,
                    }
                }
                write!(f, "}}")
            }
        }
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl<'de> Deserialize<'de> for MetaValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetaValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "any value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<MetaValue, E> {
                Ok(MetaValue::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<MetaValue, E> {
                Ok(MetaValue::Int(v.into()))
            }
            fn visit_i128<E>(self, v: i128) -> Result<MetaValue, E> {
                Ok(MetaValue::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<MetaValue, E> {
                Ok(MetaValue::Int(v.into()))
            }
            fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<MetaValue, E> {
                Ok(i128::try_from(v).map_or(MetaValue::Float(v as f64), MetaValue::Int))
            }
            fn visit_f64<E>(self, v: f64) -> Result<MetaValue, E> {
                Ok(MetaValue::Float(v))
            }
            fn visit_char<E>(self, v: char) -> Result<MetaValue, E> {
                Ok(MetaValue::Str(v.to_string()))
            }
            fn visit_str<E>(self, v: &str) -> Result<MetaValue, E> {
                Ok(MetaValue::Str(v.to_owned()))
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<MetaValue, E> {
                Ok(MetaValue::Str(String::from_utf8_lossy(v).into_owned()))
            }
            fn visit_unit<E>(self) -> Result<MetaValue, E> {
                Ok(MetaValue::Unit)
            }
            fn visit_none<E>(self) -> Result<MetaValue, E> {
                Ok(MetaValue::Option(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<MetaValue, D::Error> {
                Ok(MetaValue::Option(Some(Box::new(MetaValue::deserialize(
                    d,
                )?))))
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<MetaValue, D::Error> {
                MetaValue::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<MetaValue, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = a.next_element()? {
                    items.push(v);
                }
                Ok(MetaValue::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<MetaValue, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = a.next_entry()? {
                    entries.push(entry);
                }
                Ok(MetaValue::Map(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// A field's value: of the field's type, or (when it does not fit) what it was. Serde buffers
/// the value to try the first, so a misfit never leaves the reader mid-value.
#[derive(serde::Deserialize)]
#[serde(untagged)]
pub(crate) enum Attempt<T> {
    Fits(T),
    Misfit(MetaValue),
}

/// A map's entries in file order, names first (a name that is not a string fails the map).
pub(crate) struct Entries<V>(pub Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Entries<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entry<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Entry<V> {
            type Value = Entries<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a map from names")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Entries<V>, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = a.next_entry()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        d.deserialize_map(Entry(std::marker::PhantomData))
    }
}

/// Implements `Deserialize` for a loader's settings struct, field by field: `field: "what it
/// holds"` for a plain field, and `map field: "what each entry holds"` (any number of them) for a
/// map whose entries are checked one by one (a bad entry is dropped, the others kept). The struct implements
/// `Default` and has a `meta_problems: MetaProblems` field, where the problems go.
macro_rules! lenient_settings {
    ($ty:ident { $($field:ident : $expect:literal),* $(,)? } $(map $mfield:ident : $mexpect:literal)*) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use $crate::plugin::meta::{Attempt, MetaProblems};
                const FIELDS: &[&str] = &[$(stringify!($field),)* $(stringify!($mfield),)*];
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        write!(f, "the settings ({})", FIELDS.join(", "))
                    }
                    fn visit_unit<E>(self) -> Result<$ty, E> {
                        Ok(<$ty>::default())
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> Result<$ty, A::Error> {
                        let mut s = <$ty>::default();
                        let mut problems = MetaProblems::default();
                        while let Some(key) = map.next_key::<String>()? {
                            match key.as_str() {
                                $(stringify!($field) => match map.next_value::<Attempt<_>>()? {
                                    Attempt::Fits(v) => s.$field = v,
                                    Attempt::Misfit(found) => problems.bad(
                                        key,
                                        $expect,
                                        &found,
                                        format!("the default ({:?}) is used", s.$field),
                                    ),
                                },)*
                                $(stringify!($mfield) => {
                                    match map.next_value::<Attempt<$crate::plugin::meta::Entries<Attempt<_>>>>()? {
                                        Attempt::Fits($crate::plugin::meta::Entries(entries)) => {
                                            for (name, entry) in entries {
                                                match entry {
                                                    Attempt::Fits(v) => {
                                                        s.$mfield.insert(name, v);
                                                    }
                                                    Attempt::Misfit(found) => problems.bad(
                                                        format!("{}.{name:?}", stringify!($mfield)),
                                                        $mexpect,
                                                        &found,
                                                        "the entry is left out".to_owned(),
                                                    ),
                                                }
                                            }
                                        }
                                        Attempt::Misfit(found) => problems.bad(
                                            key,
                                            "a map from names to entries",
                                            &found,
                                            format!("the default ({:?}) is used", s.$mfield),
                                        ),
                                    }
                                })*
                                _ => {
                                    map.next_value::<serde::de::IgnoredAny>()?;
                                    problems.unknown(key, FIELDS);
                                }
                            }
                        }
                        s.meta_problems = problems;
                        Ok(s)
                    }
                }
                d.deserialize_struct(stringify!($ty), FIELDS, V)
            }
        }
    };
}
pub(crate) use lenient_settings;
