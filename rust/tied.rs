// SPDX-License-Identifier: GPL-2.0

//! Values kept together with what they borrow.
//!
//! The portable core has no allocator: its hist data, maps and histograms
//! borrow their text, their event's fields and their memory for a lifetime
//! (`HistData<'a>`, `Histogram<'a>`). The shell owns those on the heap, and
//! must keep each with what borrows it, in one value that lives as long as
//! a trigger. [`Tied`] is that value: an owner, in a [`KBox`] of its own so
//! that nothing it holds moves again, and a value that borrows from it and
//! is only ever handed out for a lifetime no longer than a borrow of the
//! [`Tied`] itself.
//!
//! The value is made by a closure that is given the owner for a lifetime it
//! cannot name (`for<'a>`): it can borrow from the owner, or from what lives
//! for ever, and from nothing else. Which types may be tied is said by a
//! [`Family`], whose [`shorten`](Family::shorten) the compiler checks.
//!
//! A large value is built where the [`Tied`] is to live
//! ([`try_init`](Tied::try_init)), inside a larger value that is itself
//! built in its heap allocation, not on the stack: triggers are made on a
//! path that nests (a field variable's hidden histogram is made inside
//! the making of its trigger), with little stack to spare.
//!
//! This is the only place in the shell where a borrow's lifetime is erased
//! (to `'static`, inside [`Tied`], never handed out).

use core::mem::{ManuallyDrop, MaybeUninit};
use core::ptr;

use kernel::alloc::{flags::GFP_KERNEL, AllocError, KBox};
use kernel::init::{self, Init};

/// A type that borrows for a lifetime, named for every lifetime at once:
/// `Of<'a>` is the type borrowing for `'a` (`Histogram<'a>`, say). The
/// implementation is a type of its own, with no values, that stands for
/// the family.
///
/// [`shorten`](Family::shorten) is the proof that a value borrowing for a
/// long lifetime may be used as one borrowing for a shorter one (that the
/// type is covariant in its lifetime). For such a type its body is its
/// argument, which the compiler accepts only if that holds; a type it does
/// not hold for (one that can be given a borrow through a shared reference,
/// say a [`Cell`](core::cell::Cell) of one) cannot be tied.
pub(crate) trait Family {
    /// The type, borrowing for `'a`.
    type Of<'a>;

    /// `long`, seen as a value that borrows for `'short` only.
    fn shorten<'short, 'long: 'short>(long: &'short Self::Of<'long>) -> &'short Self::Of<'short>;
}

/// An owner `O` and a value of `F::Of<'_>` that may borrow from it.
///
/// The owner can only be reached by the closure that makes the value; the
/// value, through [`get`](Tied::get) and [`with_mut`](Tied::with_mut), for
/// no longer than `self` is borrowed. Dropping the [`Tied`] drops the value,
/// then the owner.
///
/// # Invariants
///
/// - `value` was made by a closure given `&mut *owner` for a lifetime the
///   closure could not name: it borrows from the contents of `owner`, or
///   from what lives for ever, and from nothing else. Its `'static` stands
///   for "as long as `owner`": it is handed out only as `F::Of<'s>`, for a
///   borrow `'s` of `self`.
/// - `owner`'s contents are not reached again, but through `value`, until
///   `drop()` has dropped `value`. Moving `self` moves the box's pointer,
///   not its contents.
///
/// # Examples
///
/// The words of a text, kept with the text:
///
/// ```ignore
/// use kernel::alloc::{flags::GFP_KERNEL, KVec};
/// use kernel::error::{code::EINVAL, Error};
///
/// use crate::tied::{Family, Tied};
///
/// struct WordsOf;
///
/// impl Family for WordsOf {
///     type Of<'a> = KVec<&'a str>;
///
///     fn shorten<'short, 'long: 'short>(
///         long: &'short KVec<&'long str>,
///     ) -> &'short KVec<&'short str> {
///         long
///     }
/// }
///
/// let mut text = KVec::new();
/// text.extend_from_slice(b"two words", GFP_KERNEL)?;
/// let words = Tied::<_, WordsOf>::try_new(text, |text| {
///     let text = core::str::from_utf8(text).map_err(|_| EINVAL)?;
///     let mut words = KVec::new();
///     for word in text.split(' ') {
///         words.push(word, GFP_KERNEL)?;
///     }
///     Ok::<_, Error>(words)
/// })?;
/// assert_eq!(words.get()[1], "words");
/// ```
///
/// `rust/kunit.rs` runs the same (`tied_value_borrows_its_owner`), and
/// builds one in place.
///
/// `repr(C)`, the value first: a value at its holder's address costs
/// the event path no offset (see `command::grow::Generation`); and laid
/// out as [`Slot`], in which [`try_init`](Tied::try_init) writes it.
#[repr(C)]
pub(crate) struct Tied<O, F: Family> {
    value: ManuallyDrop<F::Of<'static>>,
    owner: KBox<O>,
}

impl<O, F: Family> Tied<O, F> {
    /// Boxes `owner`, and ties to it the value `make` makes of it.
    ///
    /// `make` gets the owner for a lifetime it cannot name: what it returns
    /// may borrow from the owner, and what it builds may not outlive it.
    /// Fails if the box cannot be had or `make` fails. The owner borrows
    /// nothing itself (`'static`): it is what is borrowed.
    #[inline]
    pub(crate) fn try_new<E: From<AllocError>>(
        owner: O,
        make: impl for<'a> FnOnce(&'a mut O) -> Result<F::Of<'a>, E>,
    ) -> Result<Self, E>
    where
        O: 'static,
    {
        let mut owner = KBox::new(owner, GFP_KERNEL)?;
        let contents: *mut O = &mut *owner;
        // SAFETY: the box's contents stay where they are until the box is
        // dropped, which `drop()` does after the value, and are not reached
        // but through the value meanwhile: so the value may borrow them for
        // as long as the result lives, which `'static` stands for here.
        // `make` cannot rely on more, for it is made for every lifetime.
        // (Made for this one, the value needs no cast, nor copy.)
        let value = make(unsafe { &mut *contents })?;
        // INVARIANT: `make` could not name the lifetime it was given the
        // owner for; the owner is not reached again but by `drop()`.
        Ok(Tied {
            value: ManuallyDrop::new(value),
            owner,
        })
    }

    /// [`try_new`](Self::try_new), with the value written by `make` where
    /// the [`Tied`] is initialised rather than returned: a large value
    /// (a histogram) is never on the stack. `make` gets the owner, and the
    /// value's place, each for a lifetime it cannot name: the value may
    /// borrow the owner, not its own place. It returns the value as
    /// written into the place (`MaybeUninit::write()`): a reference to
    /// anything else fails the initialisation, as out of memory.
    #[inline]
    pub(crate) fn try_init<E: From<AllocError>>(
        owner: O,
        make: impl for<'a, 'p> FnOnce(
            &'a mut O,
            &'p mut MaybeUninit<F::Of<'a>>,
        ) -> Result<&'p mut F::Of<'a>, E>,
    ) -> impl Init<Self, E>
    where
        O: 'static,
    {
        let init = move |slot: *mut Self| {
            let mut owner = KBox::new(owner, GFP_KERNEL)?;
            let contents: *mut O = &mut *owner;
            // SAFETY: `slot` is valid for writes of a `Self`, and reached by
            // nothing else until the initialiser returns (its contract).
            // `Slot` is laid out as `Self` (see `Slot`), each field in a
            // `MaybeUninit`, which asks nothing of its contents. The borrow
            // ends with this closure: the value, which outlives it, cannot
            // hold one of its own place, whose lifetime is not the owner's.
            let slot = unsafe { &mut *slot.cast::<Slot<F::Of<'_>, O>>() };
            // SAFETY: as in `try_new()`: the box's contents stay put until
            // `drop()` has dropped the value, and are reached only through
            // it meanwhile.
            let contents = unsafe { &mut *contents };
            let place_at = slot.value.as_ptr();
            // On an error the box goes with `owner`, and whatever `make`
            // wrote is left as it is, never dropped: nothing in `*slot`
            // needs a drop.
            let written = make(contents, &mut slot.value)?;
            // A reference to the place, as safe code can only have one,
            // is to a value written there.
            if !ptr::eq(ptr::from_mut(written).cast_const(), place_at) {
                return Err(AllocError.into());
            }
            slot.owner.write(owner);
            // INVARIANT: as in `try_new()`; the value is whole in its place
            // (checked above), and the owner is written: `*slot` is whole.
            Ok(())
        };
        // SAFETY: the closure returns `Ok` once both fields of `*slot` are
        // written, and on an error has written nothing that needs a drop;
        // `Self` has no pinned field, so may move once initialised.
        unsafe { init::init_from_closure(init) }
    }

    /// The value, borrowing for as long as `self` is borrowed.
    #[inline(always)]
    pub(crate) fn get(&self) -> &F::Of<'_> {
        F::shorten(&*self.value)
    }

    /// Runs `change` on the value, for a lifetime it cannot name: it may
    /// move what the value borrows about inside it, but not give it a
    /// borrow of anything else, for that would not live for every lifetime.
    #[inline]
    pub(crate) fn with_mut<R>(&mut self, change: impl for<'a> FnOnce(&'a mut F::Of<'a>) -> R) -> R {
        let value: *mut F::Of<'static> = &mut *self.value;
        // SAFETY: the value is valid for as long as `self` (invariants),
        // so for the borrow of `self` this takes, and borrowed mutably for
        // it; the cast changes a lifetime, not a layout. `change` cannot
        // keep the reference, nor put into the value a borrow that lives
        // for less than every lifetime: so for as long as the owner.
        let value = unsafe { &mut *value.cast::<F::Of<'_>>() };
        change(value)
    }
}

/// A [`Tied`] being made in place, its fields not written yet: laid out
/// as `Tied<O, F>` when `V` is `F::Of<'_>`, for both are `repr(C)`, with
/// fields of the same types but for a `repr(transparent)` wrapper
/// (`MaybeUninit`, `ManuallyDrop`) and a lifetime, which change no layout.
#[repr(C)]
struct Slot<V, O> {
    value: MaybeUninit<V>,
    owner: MaybeUninit<KBox<O>>,
}

impl<O, F: Family> Drop for Tied<O, F> {
    fn drop(&mut self) {
        // SAFETY: the value is dropped once, here, and not used again;
        // `owner`, which it borrows, is dropped after it (a field, dropped
        // once this returns).
        unsafe { ManuallyDrop::drop(&mut self.value) };
    }
}
