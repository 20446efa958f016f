// SPDX-License-Identifier: GPL-2.0

//! The JSON file `rhist_json` ([`crate::hist::json`]): it streams, one
//! seq_file record per entry ([`JsonCursor`]), so that its buffer stays a
//! page or so whatever the histogram's size.

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::KVVec;
use kernel::error::{code, Error};
use kernel::prelude::*;

use super::open::{EventSeqFile, OpenFile, Record, Records};
use crate::command;
use crate::event::KernelSymbols;
use crate::hist::histogram::KEY_SIZE_MAX;
use crate::hist::json;
use crate::hist::map::SUMS_MAX;
use crate::hist::output::ValStat;
use crate::kernel_ext::seq_file::SeqFile;
use crate::tracefs::{EventMutexHeld, SeqReadHeld};
use crate::tracing::{EventFile, TriggerData, TriggerId};

/// The `rhist_json` file: its reads keep where they are, a
/// [`JsonCursor`].
pub(super) struct JsonFile;

impl EventSeqFile for JsonFile {
    type Reader = JsonCursor;

    fn reader() -> JsonCursor {
        JsonCursor::new()
    }
}

/// A record of the JSON document.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `{"version":1,"histograms":[`
    DocStart,
    /// A histogram's fields, up to its entries.
    Head,
    /// One entry.
    Entry,
    /// A histogram's snapshot and totals.
    Tail,
    /// `]}`
    DocEnd,
    /// Past the end.
    Done,
    /// Moving here failed: what reading it gives.
    Failed(Error),
}

/// Where a read of an `rhist_json` file is: the record at seq_file
/// position `pos`. A histogram's entries are sorted once, when its head
/// is reached, and kept across `read()`s (C's `hist` file, a single
/// record, sorts them again for each larger buffer it tries).
pub(super) struct JsonCursor {
    /// The seq_file position of the record.
    pos: i64,
    /// What the record is.
    step: Step,
    /// The histogram of `Head`, `Entry` and `Tail`: its trigger's place
    /// among the event's rhist triggers, and its identity, both checked
    /// again by each `start()` (the lock was dropped in between) and
    /// each `show()`, which finds the trigger again.
    trig_no: usize,
    data: Option<TriggerId>,
    /// Its contents' version when the head was shown: a `clear`, a grow
    /// or another histogram made at the same address changes it.
    version: u64,
    /// Its entries, sorted (`order[..n]`; `max_elts` long).
    order: KVVec<u32>,
    n: usize,
    /// The entry of `Entry`.
    at: usize,
    /// Its columns, for `.percent` and `.graph`.
    stats: [ValStat; SUMS_MAX],
}

impl JsonCursor {
    fn new() -> Self {
        Self {
            pos: 0,
            step: Step::DocStart,
            trig_no: 0,
            data: None,
            version: 0,
            order: KVVec::new(),
            n: 0,
            at: 0,
            stats: [ValStat::default(); SUMS_MAX],
        }
    }

    /// Back to the document's start, the sorted entries freed.
    fn reset(&mut self) {
        *self = Self::new();
    }

    /// The rhist trigger number `no` of `file`, with its state.
    fn nth_trigger<'a>(
        held: EventMutexHeld<'a>,
        file: &'a EventFile,
        no: usize,
    ) -> Option<(&'a TriggerData, &'a command::Trigger)> {
        file.triggers(held)
            .filter_map(|data| Some((data, command::state(held, data)?)))
            .nth(no)
    }

    /// Moves to the head of histogram `no`, sorting its entries, or to
    /// the document's end when there is none.
    fn enter(&mut self, held: EventMutexHeld<'_>, file: &EventFile, no: usize) -> Result {
        self.order = KVVec::new();
        self.data = None;
        let Some((data, trigger)) = Self::nth_trigger(held, file, no) else {
            self.step = Step::DocEnd;
            return Ok(());
        };
        let hist = trigger.hist(held);
        self.order
            .extend_with(hist.map().max_elts(), 0, GFP_KERNEL)?;
        self.n = hist.sort_entries(&mut self.order);
        self.stats = hist.column_stats(self.order.get(..self.n).unwrap_or(&[]));
        self.version = trigger.version(held);
        (self.step, self.trig_no, self.data, self.at) = (Step::Head, no, Some(data.id()), 0);
        Ok(())
    }

    /// Moves to the next record; [`holds`](Self::holds) must be true.
    fn advance(&mut self, held: EventMutexHeld<'_>, file: &EventFile) {
        let moved = match self.step {
            Step::DocStart => self.enter(held, file, 0),
            Step::Head | Step::Entry => {
                self.at = if self.step == Step::Head {
                    0
                } else {
                    self.at + 1
                };
                self.step = if self.at < self.n {
                    Step::Entry
                } else {
                    Step::Tail
                };
                Ok(())
            }
            Step::Tail => self.enter(held, file, self.trig_no + 1),
            Step::DocEnd | Step::Done | Step::Failed(_) => {
                self.step = Step::Done;
                Ok(())
            }
        };
        if let Err(e) = moved {
            self.step = Step::Failed(e);
        }
        self.pos += 1;
    }

    /// Whether the record's histogram is still the one whose entries
    /// were sorted: the same trigger at the same place, with the same
    /// contents (neither cleared nor grown, nor another trigger made at
    /// the same address: [`command::Trigger::version`]) and a map of the
    /// same size (so that every sorted index is one of its elements).
    fn holds(&self, held: EventMutexHeld<'_>, file: &EventFile) -> bool {
        if !matches!(self.step, Step::Head | Step::Entry | Step::Tail) {
            return true;
        }
        let Some((data, trigger)) = Self::nth_trigger(held, file, self.trig_no) else {
            return false;
        };
        if Some(data.id()) != self.data {
            return false;
        }
        // The same histogram, neither cleared nor grown since its head:
        // the document describes one state of it, or the read fails.
        // (`hist()` first: with `:grow`, a fold it does is a new version.)
        let max_elts = trigger.hist(held).map().max_elts();
        trigger.version(held) == self.version && max_elts == self.order.len()
    }

    /// Writes the record, of `file`'s histograms.
    fn show(&self, held: EventMutexHeld<'_>, file: &EventFile, out: &mut SeqFile) -> Result {
        // The writes do not fail: the seq_file records an overflow.
        let trigger = match self.step {
            Step::DocStart => {
                let _ = json::write_doc_start(out);
                return Ok(());
            }
            Step::DocEnd => {
                let _ = json::write_doc_end(out);
                return Ok(());
            }
            Step::Done => return Ok(()),
            Step::Failed(e) => return Err(e),
            // The trigger found again: `start()` checked that it holds
            // (`holds()`), under this hold of the lock.
            Step::Head | Step::Entry | Step::Tail => {
                match Self::nth_trigger(held, file, self.trig_no) {
                    Some((data, trigger)) if Some(data.id()) == self.data => (data, trigger),
                    _ => return Err(code::EAGAIN),
                }
            }
        };
        let (data, trigger) = trigger;
        let hist = trigger.hist(held);
        let entries = self.order.get(..self.n).unwrap_or(&[]);
        match self.step {
            Step::Head => {
                let info = command::info_parts(held, data, trigger);
                let _ = hist.write_json_head(out, self.trig_no, &info, &self.stats);
            }
            Step::Entry => {
                if let Some(&idx) = entries.get(self.at) {
                    let mut first = self.at == 0;
                    let _ = hist.write_json_entry(out, idx, &mut first, &KernelSymbols);
                }
            }
            _ => {
                let mut key = [0u8; KEY_SIZE_MAX];
                let snapshot = trigger.last_snapshot(&mut key);
                let _ = hist.write_json_tail(
                    out,
                    entries,
                    &self.stats,
                    &KernelSymbols,
                    snapshot.as_ref(),
                );
            }
        }
        Ok(())
    }
}

/// The JSON file's records: one per piece of the document (its start,
/// each histogram's head, each entry, each histogram's tail, its end),
/// `event_mutex` held from `start()` to `stop()` as the tracing core's
/// event lists hold it.
impl Records for JsonFile {
    /// Takes the read to the record at `pos`.
    fn start(
        held: SeqReadHeld<'_>,
        state: &OpenFile<JsonCursor>,
        cursor: &mut JsonCursor,
        pos: i64,
    ) -> Record {
        let held = held.held();
        let Some(file) = state.event_file(held) else {
            return Record::Failed(code::ENODEV);
        };
        if pos == 0 || pos < cursor.pos {
            cursor.reset();
        }
        // A read that goes on holds its histogram, or fails: the document
        // cannot go on with another one's entries.
        if !cursor.holds(held, file) {
            cursor.step = Step::Failed(code::EAGAIN);
        }
        // A seek: the records before `pos` again.
        while cursor.pos < pos && cursor.step != Step::Done {
            // `holds()` after each move.
            cursor.advance(held, file);
        }
        match cursor.step {
            Step::Done => Record::End,
            Step::Failed(e) => Record::Failed(e),
            _ => Record::At,
        }
    }

    fn next(
        held: SeqReadHeld<'_>,
        state: &OpenFile<JsonCursor>,
        cursor: &mut JsonCursor,
        pos: &mut i64,
    ) -> Record {
        let held = held.held();
        match state.event_file(held) {
            // The record was found by `start()` or moved to under the same
            // hold: `holds()`.
            Some(file) => cursor.advance(held, file),
            None => {
                cursor.step = Step::Failed(code::ENODEV);
                cursor.pos += 1;
            }
        }
        *pos = cursor.pos;
        match cursor.step {
            Step::Done => Record::End,
            _ => Record::At,
        }
    }

    /// Writes the record the cursor is at.
    fn show(
        held: SeqReadHeld<'_>,
        state: &OpenFile<JsonCursor>,
        cursor: &JsonCursor,
        out: &mut SeqFile,
    ) -> Result {
        let held = held.held();
        let file = state.event_file(held).ok_or(code::ENODEV)?;
        cursor.show(held, file, out)
    }
}
