//! The editor's undo journal: the session layer's one undo order over terrain strokes and
//! block edits ([`loam_session::UndoJournal`]) as a resource. Ctrl+Z / Ctrl+Y take its
//! actions through the [`super::sink::EditSink`] (the local world, or the server).

use bevy::prelude::{Deref, DerefMut, Resource};
use loam_session::UndoJournal;
use loam_store::{Store, StoreError};

/// The editor's undo and redo stacks ([`UndoJournal`], which it dereferences to).
#[derive(Resource, Debug, Default, Deref, DerefMut)]
pub struct Journal(pub UndoJournal);

impl Journal {
    /// The journal of a world file's op log ([`UndoJournal::from_store`]).
    ///
    /// # Errors
    /// As [`UndoJournal::from_store`].
    pub fn from_store(store: &Store) -> Result<Self, StoreError> {
        UndoJournal::from_store(store).map(Self)
    }
}
