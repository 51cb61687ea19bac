"""The dashboard's benchmarks: edits, uploads and tab opens in a browser, a class on one server, page opens."""
