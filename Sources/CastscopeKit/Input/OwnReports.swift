/// castscope's own reports, told by how they begin: the text report (`castscope: N files, …`),
/// Markdown (`# castscope report`), JSON (`"schema": "castscope.…`), Perfetto (its generator)
/// and HTML (its generator meta tag), and the rows of its `file://` ClickHouse tables. A bundle that holds an earlier report (a support engineer
/// keeps `report.txt` beside the customer's files, `castscope analyze b > b/report.txt`) does not
/// read it as a log: its timelines made sessions of their own, a never-connected error among
/// them. `-o` replaces without `--force` only a file that begins so.
public enum OwnReports {
    /// The note an input that is one gets (it is listed, not read).
    public static let note = "a castscope report, not a log: not read"

    /// Whether `head` (a file's first 4 KB or more) begins like one of castscope's reports.
    public static func begins(_ head: some Collection<UInt8>) -> Bool {
        var h = Array(head.prefix(4096))[...]
        if h.starts(with: [0xEF, 0xBB, 0xBF]) { h = h.dropFirst(3) }
        func starts(_ s: String) -> Bool { h.starts(with: s.utf8) }
        func holds(_ s: String, within: Int) -> Bool { h.prefix(within).withUnsafeBytes { findBytes($0, Array(s.utf8), from: 0) != nil } }
        // (`castscope: 2 files, …`: its own stderr line, `castscope: error: …`, pasted before a
        // log, is not a report)
        if starts("castscope: "), h.count > 11, (0x30...0x39).contains(h[h.startIndex + 11]) { return true }
        if starts("# castscope report") { return true }
        if starts("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"castscope\"") { return true }
        if starts("{"), holds("\"schema\": \"castscope.", within: 64) { return true }
        if starts("<!DOCTYPE html>"), holds("<meta name=\"generator\" content=\"castscope ", within: 4096) { return true }
        // The rows of a `--clickhouse file://` export (JSONEachRow): each begins with its
        // table's id, its bundle's next. Such a folder in a bundle was read as a `plain` log,
        // its event rows' bodies made sessions of their own (hostile round 10).
        if ["RecordId", "SessionId", "FindingId", "InputId"].contains(where: { starts("{\"\($0)\":\"") }),
            holds("\",\"BundleId\":\"", within: 64)
        {
            return true
        }
        return false
    }
}
