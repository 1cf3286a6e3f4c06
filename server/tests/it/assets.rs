//! The browser assets a release build ships: content-hashed names that browsers keep for a
//! year, served precompressed (brotli, gzip) when the browser accepts it; pages never cached
//! and naming the hashed files. A site folder laid out as `.ci/build` writes it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use reqwest::header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING};

const ID: &str = "plateau-0123456789ab";

/// The router over a site folder and `store` (the page reads the runs list from it).
async fn spawn_site(store: &app::db::testing::TestDb) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("build-id"), format!("{ID}\n")).unwrap();
    for (name, body) in
        [(format!("{ID}.js"), "export default 1;"), (format!("{ID}.css"), "body{}"), ("plateau.css".into(), "body{}")]
    {
        std::fs::write(pkg.join(&name), body).unwrap();
        std::fs::write(pkg.join(format!("{name}.gz")), b"gz-bytes").unwrap();
        std::fs::write(pkg.join(format!("{name}.br")), b"br-bytes").unwrap();
    }
    let (base, _) = crate::common::serve(|addr| crate::common::state(store.db.clone(), dir.path(), addr)).await;
    (base, dir)
}

#[tokio::test]
async fn hashed_assets_are_immutable_and_precompressed() {
    for store in app::db::testing::backends().await {
        let (base, _dir) = spawn_site(&store).await;
        let client = reqwest::Client::new();
        let url = format!("{base}/pkg/{ID}.js");

        let r = client.get(&url).header(ACCEPT_ENCODING, "gzip, deflate, br").send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()[CONTENT_ENCODING], "br");
        assert_eq!(r.headers()[CACHE_CONTROL], "public, max-age=31536000, immutable");
        assert_eq!(r.bytes().await.unwrap().as_ref(), b"br-bytes");

        let r = client.get(&url).header(ACCEPT_ENCODING, "gzip").send().await.unwrap();
        assert_eq!(r.headers()[CONTENT_ENCODING], "gzip");
        assert_eq!(r.bytes().await.unwrap().as_ref(), b"gz-bytes");

        let r = client.get(&url).send().await.unwrap();
        assert!(r.headers().get(CONTENT_ENCODING).is_none());
        assert_eq!(r.headers()[CACHE_CONTROL], "public, max-age=31536000, immutable");
        assert_eq!(r.bytes().await.unwrap().as_ref(), b"export default 1;");

        // An unhashed name is revalidated, never kept for a year.
        let r = client.get(format!("{base}/pkg/plateau.css")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()[CACHE_CONTROL], "no-cache");
        let r = client.get(format!("{base}/pkg/plateau-nothex!.js")).send().await.unwrap();
        assert_eq!(r.status(), 404);
    }
}

#[tokio::test]
async fn pages_are_not_stored_and_name_the_hashed_assets() {
    for store in app::db::testing::backends().await {
        let (base, _dir) = spawn_site(&store).await;
        let r = reqwest::get(format!("{base}/")).await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()[CACHE_CONTROL], "no-store");
        let html = r.text().await.unwrap();
        for asset in [
            format!("/pkg/{ID}.css"),
            format!("/pkg/{ID}.echarts.js"),
            format!("/pkg/{ID}.ui.js"),
            format!("/pkg/{ID}.charts.js"),
            format!("pkg/{ID}_bg.wasm"),
        ] {
            assert!(html.contains(&asset), "{asset} is not named in the page");
        }
    }
}
