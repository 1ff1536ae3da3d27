/// app-group-not-entitled: a process may not use the app group container, so the socket file
/// can never be created or found there (the app group IDs of the host app and the extension
/// must match and be in both entitlements).
struct AppGroupNotEntitledRule: FindingRule {
    let kind = "app-group-not-entitled"
    /// Made once (an array and its filter per call was most of the rule on a session of its own).
    static let kinds = KindSet([.appGroupNotEntitled])

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        perLine(r, kinds: Self.kinds) { e in
            e.code == .appGroupNotEntitled
                ? (.error, "a process is not entitled to the app group: the shared container (and the socket file in it) cannot be used; check that the host app and the extension list the same app group")
                : nil
        }
    }
}
