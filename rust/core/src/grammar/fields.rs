// SPDX-License-Identifier: GPL-2.0

//! Variables, values, keys and sort keys: how a trigger's pieces split
//! into them, as C's `create_*_fields()` take them.

use super::*;

/// One variable definition, `name=expr`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VarDef<'a> {
    /// The name (may be anything C accepts, even empty).
    pub name: &'a str,
    /// The expression text, for [`TriggerSpec::parse_expr`].
    pub expr: &'a str,
}

/// The variable definitions of a trigger, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarDefs<'a> {
    pub(super) defs: BoundedVec<VarDef<'a>, TRACING_MAP_VARS_MAX>,
}

impl<'a> VarDefs<'a> {
    /// Replaces the expression text of definition `i` by what C's buffer
    /// holds after parsing it ([`Expr::c_remains`]).
    pub fn set_parsed_expr(&mut self, i: usize, remains: &'a str) {
        if let Some(def) = self
            .defs
            .items
            .get_mut(..self.defs.len)
            .and_then(|d| d.get_mut(i))
        {
            def.expr = remains;
        }
    }
}

impl<'a> Deref for VarDefs<'a> {
    type Target = [VarDef<'a>];

    fn deref(&self) -> &[VarDef<'a>] {
        &self.defs
    }
}

/// The values of `vals=`, as the loop of `create_val_fields()` takes them.
///
/// C always makes the hitcount value first.  Then it takes at most
/// [`TRACING_MAP_VALS_MAX`] pieces and at most two fields: the first
/// `hitcount` piece is skipped (it is the hitcount value), anything else
/// (a second `hitcount` too) is a field. `N` is the most fields kept:
/// hist's two, or rhist's extension's [`VAL_FIELDS_EXT_MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValFields<'a, const N: usize = VALS_MAX> {
    fields: BoundedVec<&'a str, N>,
    too_many: bool,
    need_nohc: bool,
}

impl<'a, const N: usize> ValFields<'a, N> {
    /// The value expressions to parse, in order, with
    /// [`FieldContext::Val`].
    pub fn fields(&self) -> &[&'a str] {
        &self.fields
    }

    /// The silent `-EINVAL` C returns after the fields when pieces are left
    /// over (anything but a last `hitcount`).
    pub fn too_many_error(&self) -> Option<HistError> {
        self.too_many.then_some(HistError::silent(errno::EINVAL))
    }

    /// `NEED_NOHC_VAL`, which C reports last, when `nohitcount` is given
    /// and there is no other value.
    pub fn nohitcount_error(&self) -> Option<HistError> {
        self.need_nohc
            .then_some(HistError::new(HistErrorKind::NeedNohcVal, 0))
    }
}

/// One key of `keys=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyField<'a> {
    /// Exactly `stacktrace`: the stack trace key, no parsing.
    #[default]
    Stacktrace,
    /// An expression to parse with [`FieldContext::Key`].
    Expr(&'a str),
}

impl<'a> KeyField<'a> {
    /// The key text.
    #[cfg(not(MODULE))]
    pub fn text(&self) -> &'a str {
        match self {
            KeyField::Stacktrace => "stacktrace",
            KeyField::Expr(text) => text,
        }
    }
}

/// The keys of `keys=`, as `create_key_fields()` takes them: at most `N`,
/// hist's three or rhist's extension's [`KEYS_EXT_MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyFields<'a, const N: usize = TRACING_MAP_KEYS_MAX> {
    fields: BoundedVec<KeyField<'a>, N>,
    too_many: bool,
}

impl<'a, const N: usize> KeyFields<'a, N> {
    /// The keys, in order.
    pub fn fields(&self) -> &[KeyField<'a>] {
        &self.fields
    }

    /// The silent `-EINVAL` C returns after the keys when there are more
    /// than [`TRACING_MAP_KEYS_MAX`].
    pub fn too_many_error(&self) -> Option<HistError> {
        self.too_many.then_some(HistError::silent(errno::EINVAL))
    }
}

/// One sort key, `name[.ascending|.descending]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey<'a> {
    text: &'a str,
    name: &'a str,
    modifier: Option<&'a str>,
    descending: Result<bool, HistError>,
}

impl Default for SortKey<'_> {
    fn default() -> Self {
        SortKey {
            text: "",
            name: "",
            modifier: None,
            descending: Ok(false),
        }
    }
}

impl<'a> SortKey<'a> {
    /// The whole piece.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The name to match: `hitcount`, or a key's or value's name.  C fails
    /// with `INVALID_SORT_FIELD` at `errpos(name)` if none matches.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// What follows the first `.`, if anything.
    #[cfg(not(MODULE))]
    pub fn modifier(&self) -> Option<&'a str> {
        self.modifier
    }

    /// The order, or `INVALID_SORT_MODIFIER`, which C reports only once
    /// the name matched.
    pub fn descending(&self) -> Result<bool, HistError> {
        self.descending
    }
}

/// The sort keys of `sort=`, as `create_sort_keys()` takes them: at most
/// `N`, hist's two or rhist's extension's [`SORT_KEYS_EXT_MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKeys<'a, const N: usize = TRACING_MAP_SORT_KEYS_MAX> {
    keys: BoundedVec<SortKey<'a>, N>,
    error: Option<HistError>,
}

impl<'a, const N: usize> SortKeys<'a, N> {
    /// The keys C takes before stopping.
    pub fn keys(&self) -> &[SortKey<'a>] {
        &self.keys
    }

    /// The error that stopped C after those keys (`EMPTY_SORT_FIELD`,
    /// `TOO_MANY_SORT_FIELDS`).
    pub fn error(&self) -> Option<HistError> {
        self.error
    }
}

impl<'a> TriggerSpec<'a> {
    /// The values, split as `create_val_fields()` does.
    pub fn vals(&self) -> ValFields<'a> {
        self.split_vals(TRACING_MAP_VALS_MAX)
    }

    /// Whether a value of `vals=` ends with a statistic (`.min`, `.max`,
    /// `.avg`), so that the text may be one of rhist's extension
    /// ([`stats`](super::super::stats)) where hist rejects it.
    pub fn may_have_stats(&self) -> bool {
        self.vals
            .is_some_and(|v| v.split(',').any(|f| Statistic::split(f).is_some()))
    }

    /// Whether the text may be one of rhist's extensions where hist
    /// rejects it: a statistic, or more keys or values than hist takes
    /// (see [`KEYS_EXT_MAX`]; more sort keys only with those).
    pub fn may_be_extension(&self) -> bool {
        let pieces = |s: Option<&str>| s.map_or(0, |s| s.split(',').count());
        self.may_have_stats()
            || pieces(Some(self.keys)) > TRACING_MAP_KEYS_MAX
            || pieces(self.vals) > VALS_MAX
    }

    /// The values as rhist's extensions take them ([`stats`](super::super::stats)): as
    /// [`Self::vals`] does, but up to [`VAL_FIELDS_EXT_MAX`] fields, sums
    /// or statistics, with no limit on the pieces read.
    pub fn vals_ext(&self) -> ValFields<'a, VAL_FIELDS_EXT_MAX> {
        self.split_vals(usize::MAX)
    }

    /// `vals=` split at commas, the first `hitcount` skipped, reading at
    /// most `tokens_max` pieces and keeping at most `N` fields; the pieces
    /// left over, but for a last `hitcount`, are too many.
    pub(super) fn split_vals<const N: usize>(&self, tokens_max: usize) -> ValFields<'a, N> {
        let mut vals = ValFields {
            fields: BoundedVec::new(),
            too_many: false,
            need_nohc: false,
        };
        if let Some(text) = self.vals {
            let mut rest = Some(text);
            let mut hitcounts = 0;
            let mut tokens = 0;
            while tokens < tokens_max && vals.fields.len() < N {
                let Some(r) = rest else { break };
                let (field, next) = strsep(r, ',');
                rest = next;
                tokens += 1;
                if field == "hitcount" {
                    hitcounts += 1;
                    if hitcounts == 1 {
                        continue;
                    }
                }
                // Can't fail: the loop stops at `N` fields.
                let _ = vals.fields.push(field);
            }
            vals.too_many = rest.is_some_and(|r| r != "hitcount");
        }
        vals.need_nohc = self.no_hitcount && vals.fields.is_empty();
        vals
    }

    /// The keys, split as `create_key_fields()` does.
    pub fn keys(&self) -> KeyFields<'a> {
        self.split_keys()
    }

    /// The keys as rhist's extensions take them: up to [`KEYS_EXT_MAX`].
    pub fn keys_ext(&self) -> KeyFields<'a, KEYS_EXT_MAX> {
        self.split_keys()
    }

    /// `keys=` split at commas, at most `N` keys; any left over are too
    /// many.
    pub(super) fn split_keys<const N: usize>(&self) -> KeyFields<'a, N> {
        let mut keys = KeyFields {
            fields: BoundedVec::new(),
            too_many: false,
        };
        let mut rest = Some(self.keys);
        for _ in 0..N {
            let Some(r) = rest else { break };
            let (field, next) = strsep(r, ',');
            rest = next;
            let key = if field == "stacktrace" {
                KeyField::Stacktrace
            } else {
                KeyField::Expr(field)
            };
            // Can't fail: the loop stops at N.
            let _ = keys.fields.push(key);
        }
        keys.too_many = rest.is_some();
        keys
    }

    /// The sort keys, split as `create_sort_keys()` does (`None` without
    /// `sort=`, which sorts on hitcount).
    pub fn sort_keys(&self) -> Option<SortKeys<'a>> {
        self.split_sort_keys()
    }

    /// The sort keys as rhist's extensions take them: up to
    /// [`SORT_KEYS_EXT_MAX`], with hist's errors past them.
    pub fn sort_keys_ext(&self) -> Option<SortKeys<'a, SORT_KEYS_EXT_MAX>> {
        self.split_sort_keys()
    }

    /// `sort=` split as `create_sort_keys()` does with at most `N` keys
    /// (`N` > 0).
    pub(super) fn split_sort_keys<const N: usize>(&self) -> Option<SortKeys<'a, N>> {
        let max = N.max(1);
        let mut keys = SortKeys {
            keys: BoundedVec::new(),
            error: None,
        };
        let mut rest = Some(self.sort?);
        for i in 0..max {
            let Some(r) = rest else { break };
            let (field, next) = strsep(r, ',');
            rest = next;
            let empty = self.src.error(HistErrorKind::EmptySortField, "sort=");
            if field.is_empty() {
                keys.error = Some(empty);
                break;
            }
            if i == max - 1 && rest.is_some() {
                keys.error = Some(self.src.error(HistErrorKind::TooManySortFields, "sort="));
                break;
            }
            let (name, modifier) = strsep(field, '.');
            if name.is_empty() {
                keys.error = Some(empty);
                break;
            }
            let descending = match modifier {
                None => Ok(false),
                Some(m) if self.src.c_eq(m, "descending") => Ok(true),
                Some(m) if self.src.c_eq(m, "ascending") => Ok(false),
                Some(m) => Err(self.src.error(HistErrorKind::InvalidSortModifier, m)),
            };
            // Can't fail: at most N rounds.
            let _ = keys.keys.push(SortKey {
                text: field,
                name,
                modifier,
                descending,
            });
        }
        Some(keys)
    }
}
