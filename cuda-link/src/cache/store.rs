//! A remote store's address and its OpenDAL operator: the URL as OpenDAL
//! reads it (credentials as options, a password from the environment, a
//! folder's atomic writes), and the operator built at the first call. A
//! folder store's build touches the folder (`stat`, `mkdir`,
//! `canonicalize`): on a hung network mount that blocks, so it runs on a
//! blocking thread within the caller's deadline, never before the first
//! lookup, and a reader's build creates nothing.

use std::sync::{Arc, OnceLock};

/// The store's operator, built once, at the first call that needs it.
pub(super) struct Store {
    /// The URL as OpenDAL reads it, without the folder's atomic writes
    /// (a reader's build must not create their folder).
    url: String,
    built: OnceLock<opendal::Operator>,
}

impl Store {
    /// The store at `url` (credentials already options). A URL of a store
    /// whose build does no I/O is built now, so that a URL OpenDAL cannot
    /// read is an error at once; a folder's is only checked for a path.
    pub(super) fn new(url: String) -> Result<Self, opendal::Error> {
        let store = Store {
            url,
            built: OnceLock::new(),
        };
        match store.folder() {
            Some("") => {
                return Err(opendal::Error::new(
                    opendal::ErrorKind::ConfigInvalid,
                    "a folder store needs a path",
                ));
            }
            // Its writes go through a folder of temporaries named in the
            // URL's query (a write straight to an object's path follows a
            // symbolic link planted there): a path that cannot be written
            // into a query is refused, not written to without it.
            Some(folder) if folder.contains(['&', '#', '%', ' ', '=', '?']) => {
                return Err(opendal::Error::new(
                    opendal::ErrorKind::ConfigInvalid,
                    "a folder store's path may not hold '&', '#', '%', ' ', '=' or '?'",
                ));
            }
            Some(_) => {}
            None => {
                let _ = store
                    .built
                    .set(opendal::Operator::from_uri(store.url.as_str())?);
            }
        }
        Ok(store)
    }

    /// The folder of a `file://` or `fs://` store (a scheme of any case,
    /// as OpenDAL reads it).
    fn folder(&self) -> Option<&str> {
        let (scheme, root) = self.url.split_once("://")?;
        let folder = scheme.eq_ignore_ascii_case("file") || scheme.eq_ignore_ascii_case("fs");
        folder.then(|| root.split('?').next().unwrap_or(root))
    }

    /// The operator, built on a blocking thread at the first call (the
    /// caller's timeout bounds the wait; a build stuck in the kernel is
    /// left behind). A reader's folder store writes nothing: no folder for
    /// atomic writes, and a missing folder is an empty store.
    pub(super) async fn operator(
        self: &Arc<Self>,
        read_only: bool,
    ) -> Result<opendal::Operator, opendal::Error> {
        if let Some(operator) = self.built.get() {
            return Ok(operator.clone());
        }
        let store = Arc::clone(self);
        let built = tokio::task::spawn_blocking(move || store.build(read_only))
            .await
            .map_err(|error| {
                opendal::Error::new(opendal::ErrorKind::Unexpected, "building the store failed")
                    .set_source(error)
            })??;
        Ok(self.built.get_or_init(|| built).clone())
    }

    fn build(&self, read_only: bool) -> Result<opendal::Operator, opendal::Error> {
        let url = match self.folder() {
            Some(folder) if read_only => {
                if let Err(error) = std::fs::metadata(folder) {
                    return Err(opendal::Error::new(
                        opendal::ErrorKind::NotFound,
                        "the store's folder does not exist",
                    )
                    .set_source(error));
                }
                self.url.clone()
            }
            Some(folder) => with_atomic_writes(&self.url, folder),
            None => self.url.clone(),
        };
        opendal::Operator::from_uri(url.as_str())
    }
}

/// `redis://user:password@host/0` as OpenDAL reads a user and password:
/// its services take them as options (`?username=..&password=..`) and
/// drop a URL's user part, which would connect without them. Other
/// schemes, and URLs without a user part, are left as they are.
pub(super) fn credentials_as_options(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    if !matches!(scheme, "redis" | "rediss" | "webdav" | "webdavs") {
        return url.to_owned();
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some((user_info, host)) = rest[..authority_end].rsplit_once('@') else {
        return url.to_owned();
    };
    let (user, password) = user_info.split_once(':').unwrap_or((user_info, ""));
    let mut options = Vec::new();
    if !user.is_empty() {
        options.push(format!("username={user}"));
    }
    if !password.is_empty() {
        options.push(format!("password={password}"));
    }
    let tail = &rest[authority_end..];
    let joiner = if tail.contains('?') { "&" } else { "?" };
    match options.is_empty() {
        true => format!("{scheme}://{host}{tail}"),
        false => format!("{scheme}://{host}{tail}{joiner}{}", options.join("&")),
    }
}

/// `url` with `password` as the store's `password` option: for the
/// stores whose URL would otherwise carry it (Redis, WebDAV); `None` for
/// the others.
pub(super) fn with_password(url: &str, password: &str) -> Option<String> {
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    if !matches!(scheme, "redis" | "rediss" | "webdav" | "webdavs") {
        return None;
    }
    let encoded: String = password
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let joiner = if url.contains('?') { "&" } else { "?" };
    Some(format!("{url}{joiner}password={encoded}"))
}

/// Whether `url` carries a password: in its user part or as an option.
/// Said by the CLI, where a command line shows in `ps`.
pub(super) fn url_has_password(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let in_user_part = authority
        .rsplit_once('@')
        .is_some_and(|(user_info, _)| user_info.contains(':'));
    let query = rest.split_once('?').map_or("", |(_, query)| query);
    in_user_part
        || query.split('&').any(|pair| {
            let name = pair.split('=').next().unwrap_or("");
            name.contains("password") || name.contains("secret") || name.contains("token")
        })
}

/// A folder store writes each object to a temporary in the folder and
/// renames it into place (OpenDAL's `atomic_write_dir`): a reader never
/// sees half an object, and a symbolic link planted at an object's path
/// is replaced, never followed. `folder` is the URL's (`Store::folder`;
/// a path that would need escaping is refused by `Store::new`). A URL
/// that sets it is left as it is.
fn with_atomic_writes(url: &str, folder: &str) -> String {
    let query = url.split_once('?').map_or("", |(_, query)| query);
    if query.contains("atomic_write_dir=") {
        return url.to_owned();
    }
    let joiner = if query.is_empty() { "?" } else { "&" };
    let dir = format!("{}/.cuda-link-tmp", folder.trim_end_matches('/'));
    format!("{url}{joiner}atomic_write_dir={dir}")
}

/// `url` with any password replaced and its query (where OpenDAL takes
/// `password=`, `secret_access_key=`, ...) left out, for messages.
pub(super) fn without_password(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((user_info, host)) => {
            let user = user_info
                .split_once(':')
                .map_or(user_info, |(user, _)| user);
            format!("{scheme}://{user}:***@{host}{}", &rest[authority_end..])
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_and_password_become_options() {
        assert_eq!(
            credentials_as_options("redis://cache:s3cret@h:6379/0"),
            "redis://h:6379/0?username=cache&password=s3cret"
        );
        assert_eq!(
            credentials_as_options("redis://:s3cret@h:6379/0?root=x"),
            "redis://h:6379/0?root=x&password=s3cret"
        );
        assert_eq!(credentials_as_options("s3://b/p"), "s3://b/p");
        assert_eq!(credentials_as_options("redis://h:1/0"), "redis://h:1/0");
    }

    #[test]
    fn a_password_from_the_environment_is_an_option() {
        assert_eq!(
            with_password("redis://h:6379/0", "p&ss w").unwrap(),
            "redis://h:6379/0?password=p%26ss%20w"
        );
        assert!(with_password("s3://bucket/p", "x").is_none());
        assert!(url_has_password("redis://u:secret@h/0"));
        assert!(url_has_password("s3://b/p?secret_access_key=x"));
        assert!(!url_has_password("redis://u@h/0"));
        assert!(!url_has_password("redis://h:6379/0?root=x"));
    }

    #[test]
    fn folder_stores_write_atomically() {
        opendal::init_default_registry();
        let atomic = |url: &str| {
            let store = Store::new(url.into()).unwrap();
            with_atomic_writes(url, store.folder().unwrap())
        };
        assert_eq!(
            atomic("file:///share/cache"),
            "file:///share/cache?atomic_write_dir=/share/cache/.cuda-link-tmp"
        );
        assert_eq!(
            atomic("File:///share"),
            "File:///share?atomic_write_dir=/share/.cuda-link-tmp"
        );
        assert!(
            Store::new("redis://h:1/0".into())
                .unwrap()
                .folder()
                .is_none()
        );
        for refused in ["file:///a b", "FS:///x&y", "file://", "file:///p%20q"] {
            assert!(Store::new(refused.into()).is_err(), "{refused}");
        }
        let set = "file:///s?atomic_write_dir=/t";
        assert_eq!(atomic(set), set);
    }

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(
            without_password("redis://user:secret@host:6379/0"),
            "redis://user:***@host:6379/0"
        );
        assert_eq!(without_password("s3://bucket/prefix"), "s3://bucket/prefix");
        assert_eq!(
            without_password("s3://bucket/p?region=x&secret_access_key=abc"),
            "s3://bucket/p"
        );
    }
}
