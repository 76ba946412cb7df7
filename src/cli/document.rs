//! Turn documents on the command line: `export --format yaml|json` writes a stored thread's
//! document, `import --from yaml|json` stores one. Media travel inline (base64 in the
//! document), by reference (blob ids the store resolves), or beside the document as one file
//! per blob named by its 64 hex digits (`--blobs dir`). Blob files are found by the ids the
//! document names, checked against their hash, and never by a path the document gives.

use std::path::{Path, PathBuf};
use threadkeeper::media::BlobId;
use threadkeeper::service::{BlobsForm, ThreadService};
use threadkeeper::turns::{Format, Options};
use tokio_util::sync::CancellationToken;

/// How the command line writes media: as the protocol does, or into a folder of blob files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BlobsArg {
    /// Base64 inside the document: one self-contained file.
    Inline,
    /// Blob ids only: the document imports into a store that holds them.
    Refs,
    /// Blob ids in the document, each blob's bytes in `--blobs-dir` as a file named by its hash.
    Dir,
}

/// The document of `thread_id`; with [`BlobsArg::Dir`], each blob it names written to `dir`.
pub async fn export(
    service: &ThreadService,
    thread_id: &str,
    format: Format,
    blobs: BlobsArg,
    dir: Option<&Path>,
) -> Result<String, String> {
    let form = if blobs == BlobsArg::Inline { BlobsForm::Inline } else { BlobsForm::Refs };
    let cancel = CancellationToken::new();
    let text = service
        .export_document(thread_id, format, Options::default(), form, &cancel)
        .await
        .map_err(|e| format!("thread {thread_id}: {e}"))?;
    if blobs == BlobsArg::Dir {
        let dir = dir.ok_or("--blobs dir needs --blobs-dir DIR")?;
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let page = service.events(thread_id, 0, None).await.map_err(|e| format!("thread {thread_id}: {e}"))?;
        for id in threadkeeper::media::parts::blobs_of_events(&page.events.parse_all()) {
            let blob = service.blob(id.as_str()).await.map_err(|e| format!("{id}: {e}"))?;
            let path = blob_file(dir, &id);
            std::fs::write(&path, &blob.bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(text)
}

/// Puts into the store each blob of `dir` that `text` names and the store does not hold yet,
/// before the document is imported. A file whose bytes are not the blob its name says is
/// refused; a blob named but absent from `dir` is left for the import to name.
pub async fn put_blobs_from(service: &ThreadService, text: &str, dir: &Path) -> Result<usize, String> {
    let mut put = 0;
    for id in ids_named(text) {
        if service.blob_info(id.as_str()).await.is_ok() {
            continue;
        }
        let path = blob_file(dir, &id);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        if BlobId::of(&bytes) != id {
            return Err(format!("{}: the file's bytes are not blob {id}", path.display()));
        }
        let data = threadkeeper::media::bytes::to_base64(&bytes);
        service.put_blob(&data, None).await.map_err(|e| format!("{}: {e}", path.display()))?;
        put += 1;
    }
    Ok(put)
}

/// The file of a blob in `dir`: its 64 hex digits, nothing taken from a document.
fn blob_file(dir: &Path, id: &BlobId) -> PathBuf {
    dir.join(id.hex())
}

/// Every blob id the text names (`sha256:` and 64 lowercase hex digits), once each.
fn ids_named(text: &str) -> Vec<BlobId> {
    let mut ids: Vec<BlobId> = text
        .match_indices("sha256:")
        .filter_map(|(at, _)| text.get(at..at + 71))
        .filter_map(|candidate| BlobId::parse(candidate).ok())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_from_the_text_only_in_their_canonical_form() {
        let a = BlobId::of(b"a");
        let text = format!("blob: {a}\nother: sha256:XYZ\nagain: \"{a}\"\nshort: sha256:00");
        assert_eq!(ids_named(&text), vec![a.clone()]);
        assert_eq!(blob_file(Path::new("/d"), &a), Path::new("/d").join(a.hex()));
    }
}
