//! The cache's counters across processes, for `cuda-link cache stats`:
//! each process that used a cache leaves one small `.stats` file of its
//! counters in the folder when the cache is dropped; reading sums them,
//! and folds them into one file when they pile up. A file is claimed by
//! renaming it before it is folded, so two readers never count one twice.

use std::ffi::OsStr;
use std::io::{self, Read, Write};

use super::CacheStats;
use super::dir::{Dir, Found};

pub(super) const EXTENSION: &str = "stats";
/// Folded into one once there are more.
const FOLD_PAST: usize = 64;
/// A counter file is a few hundred bytes; a larger one is not ours.
const MAX_FILE: u64 = 4096;

/// The counters, one `name value` line each.
fn render(stats: &CacheStats) -> String {
    fields(stats)
        .iter()
        .map(|(name, value)| format!("{name} {value}\n"))
        .collect()
}

/// Each counter with its name. Destructured, so that a counter added to
/// `CacheStats` does not compile until it is listed here.
fn fields(stats: &CacheStats) -> [(&'static str, u64); 16] {
    let CacheStats {
        hits,
        misses,
        stores,
        evictions,
        corrupt,
        write_failures,
        refused,
        stale_temporaries,
        bytes_read,
        bytes_written,
        remote_hits,
        remote_misses,
        remote_errors,
        remote_refused,
        remote_bytes_read,
        remote_bytes_written,
    } = *stats;
    [
        ("hits", hits),
        ("misses", misses),
        ("stores", stores),
        ("evictions", evictions),
        ("corrupt", corrupt),
        ("write_failures", write_failures),
        ("refused", refused),
        ("stale_temporaries", stale_temporaries),
        ("bytes_read", bytes_read),
        ("bytes_written", bytes_written),
        ("remote_hits", remote_hits),
        ("remote_misses", remote_misses),
        ("remote_errors", remote_errors),
        ("remote_refused", remote_refused),
        ("remote_bytes_read", remote_bytes_read),
        ("remote_bytes_written", remote_bytes_written),
    ]
}

/// Each counter with its name, to add to.
fn fields_mut(stats: &mut CacheStats) -> [(&'static str, &mut u64); 16] {
    let CacheStats {
        hits,
        misses,
        stores,
        evictions,
        corrupt,
        write_failures,
        refused,
        stale_temporaries,
        bytes_read,
        bytes_written,
        remote_hits,
        remote_misses,
        remote_errors,
        remote_refused,
        remote_bytes_read,
        remote_bytes_written,
    } = stats;
    [
        ("hits", hits),
        ("misses", misses),
        ("stores", stores),
        ("evictions", evictions),
        ("corrupt", corrupt),
        ("write_failures", write_failures),
        ("refused", refused),
        ("stale_temporaries", stale_temporaries),
        ("bytes_read", bytes_read),
        ("bytes_written", bytes_written),
        ("remote_hits", remote_hits),
        ("remote_misses", remote_misses),
        ("remote_errors", remote_errors),
        ("remote_refused", remote_refused),
        ("remote_bytes_read", remote_bytes_read),
        ("remote_bytes_written", remote_bytes_written),
    ]
}

/// Adds the counters in `text` to `into`; unknown lines are skipped.
fn add(into: &mut CacheStats, text: &str) {
    for line in text.lines() {
        let Some((name, value)) = line.split_once(' ') else {
            continue;
        };
        let Ok(value) = value.trim().parse::<u64>() else {
            continue;
        };
        if let Some((_, field)) = fields_mut(into).into_iter().find(|(n, _)| *n == name) {
            *field = field.saturating_add(value);
        }
    }
}

/// Adds `more` to `into`, counter by counter.
pub(super) fn add_stats(into: &mut CacheStats, more: &CacheStats) {
    for ((_, field), (_, value)) in fields_mut(into).into_iter().zip(fields(more)) {
        *field = field.saturating_add(value);
    }
}

/// Leaves `stats` in the folder as a counter file of its own.
pub(super) fn record(dir: &Dir, stats: &CacheStats, unique: &str) -> io::Result<()> {
    if *stats == CacheStats::default() {
        return Ok(());
    }
    write(dir, &format!("{unique}.{EXTENSION}"), &render(stats))
}

fn write(dir: &Dir, name: &str, text: &str) -> io::Result<()> {
    let temp = format!("{}{name}", super::TEMP_PREFIX);
    let written = dir
        .create_new(&temp)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .and_then(|()| dir.rename(&temp, name));
    if written.is_err() {
        let _ = dir.remove(OsStr::new(&temp));
    }
    written
}

fn read(dir: &Dir, name: &str) -> Option<String> {
    let Found::File(file, _) = dir.open_entry(name, MAX_FILE) else {
        return None;
    };
    let mut text = String::new();
    (&file).take(MAX_FILE).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The sum of every process's counters in the folder; folds the files
/// into one when there are many.
pub(super) fn total(dir: &Dir, unique: &str) -> io::Result<CacheStats> {
    let names: Vec<String> = dir
        .list()?
        .into_iter()
        .filter(|listed| listed.regular && is_ledger(&listed.name))
        .filter_map(|listed| listed.name.to_str().map(str::to_owned))
        .collect();
    let mut sum = CacheStats::default();
    if names.len() <= FOLD_PAST {
        for name in &names {
            add(&mut sum, &read(dir, name).unwrap_or_default());
        }
        return Ok(sum);
    }
    // Claimed by a rename first: a file another reader claimed is gone.
    for (n, name) in names.iter().enumerate() {
        let claimed = format!("{}fold-{unique}-{n}", super::TEMP_PREFIX);
        if dir.rename(name, &claimed).is_ok() {
            add(&mut sum, &read(dir, &claimed).unwrap_or_default());
            let _ = dir.remove(OsStr::new(&claimed));
        }
    }
    write(dir, &format!("folded-{unique}.{EXTENSION}"), &render(&sum))?;
    // What other readers folded meanwhile is counted on the next read.
    Ok(sum)
}

/// A finished counter file (not one being written, or claimed).
pub(super) fn is_ledger(name: &OsStr) -> bool {
    !name.to_string_lossy().starts_with(super::TEMP_PREFIX)
        && std::path::Path::new(name)
            .extension()
            .is_some_and(|x| x == EXTENSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_round_trip_and_add_up() {
        let stats = CacheStats {
            hits: 3,
            remote_hits: 2,
            remote_bytes_written: 1 << 40,
            ..CacheStats::default()
        };
        let mut sum = CacheStats::default();
        add(&mut sum, &render(&stats));
        add(&mut sum, &render(&stats));
        add(&mut sum, "garbage\nhits x\nremote_errors 1\n");
        assert_eq!(sum.hits, 6);
        assert_eq!(sum.remote_hits, 4);
        assert_eq!(sum.remote_bytes_written, 2 << 40);
        assert_eq!(sum.remote_errors, 1);
    }
}
