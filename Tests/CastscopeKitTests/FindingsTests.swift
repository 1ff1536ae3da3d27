import Foundation
import Testing

@testable import CastscopeKit

/// Runs every rule over sessions built from `rows` (see SessionTests) and returns the kinds.
func findingKinds(_ rows: [(Int64, Side, String, String, [(String, String)])], thresholds: Thresholds = Thresholds(),
                  relay: [Event] = []) -> [String]
{
    let built = sessions(rows)
    var report = AnalysisReport()
    report.sessions = built.sessions
    report.unattached = built.unattached
    if !relay.isEmpty {
        let joiner = RelayJoiner()
        var r = joiner.group(relay)
        report.clock = joiner.estimate(report.sessions, r)
        if let c = report.clock { joiner.join(&report.sessions, &r, offset: c.offset) }
        report.relaySessions = RelaySessionList(r)
        report.orphanDeviceSessions = report.sessions.filter { $0.connectedAt != nil && $0.relay == nil }.map(\.id)
    }
    return Findings.run(report, thresholds).map(\.kind)
}

typealias Row = (Int64, Side, String, String, [(String, String)])

let started: Row = (0, .extension, "broadcast.started", "broadcast started", [])
func attempt(_ ms: Int64) -> Row { (ms, .extension, "socket.connect_attempt", "open socket connection", []) }
func missing(_ ms: Int64) -> Row { (ms, .extension, "socket.connect_failed", "failure: socket file missing", [("cause_text", "socket file missing")]) }
func refused(_ ms: Int64) -> Row {
    (ms, .extension, "socket.connect_failed", "connect() failed", [("errno", "61"), ("strerror", "Connection refused")])
}
func connected(_ ms: Int64) -> Row { (ms, .extension, "socket.connected", "client stream open completed", []) }
func frame(_ ms: Int64) -> Row { (ms, .extension, "frame.sent", "video sample processed successfully", []) }
func finished(_ ms: Int64) -> Row { (ms, .extension, "broadcast.finished", "broadcastFinished", []) }

/// A healthy session: connects at once, 10 fps for 3 s, finished.
let healthy: [Row] = [started, attempt(5), connected(10)] + (0..<30).map { frame(100 + Int64($0) * 100) } + [finished(3200)]

@Suite("findings")
struct FindingsTests {
    @Test("each sample produces exactly its expected findings", arguments: [
        ("healthy-jitsi", [String]()),
        ("retry-storm", ["socket-file-missing", "never-connected", "connect-retry-storm"]),
        ("stopped-10001", ["host-app-suspended", "stopped-by-host"]),
        ("jetsam-kill", ["extension-killed"]),
        ("sendbird-call-ended", ["stopped-by-host"]),
        ("mixed-bundle", ["host-app-suspended", "stopped-by-host", "orphan-device-session"]),
        ("relay", Array(repeating: "orphan-relay-session", count: 5)),
    ])
    func sampleFindings(_ sample: String, _ expected: [String]) throws {
        let r = try castscope(["analyze", "--json", "samples/\(sample)"])
        let findings = try #require(r.json?["findings"] as? [[String: Any]])
        #expect(findings.map { $0["kind"] as? String ?? "" } == expected)
        for f in findings {
            #expect(!(f["evidence"] as? [String] ?? []).isEmpty, "every finding carries evidence")
            #expect((f["message"] as? String)?.isEmpty == false)
        }
    }

    @Test func healthySessionHasNone() {
        #expect(findingKinds(healthy) == [])
    }

    @Test func retryStormAndSocketFileMissing() {
        let storm = [started] + (0..<8).flatMap { [attempt(Int64($0) * 100 + 5), missing(Int64($0) * 100 + 6)] }
        #expect(findingKinds(storm) == ["socket-file-missing", "never-connected", "connect-retry-storm"])
        // Two misses before connecting at 215 ms: normal start-up, no finding.
        #expect(findingKinds([started, attempt(5), missing(6), attempt(105), missing(106), attempt(210), connected(215), finished(900)]) == [])
        // Connecting after 2 s of ENOENT: both, as warnings.
        let late = [started] + (0..<21).flatMap { [attempt(Int64($0) * 100), missing(Int64($0) * 100 + 1)] } + [attempt(2150), connected(2160), finished(3000)]
        #expect(Set(findingKinds(late)) == ["connect-retry-storm", "socket-file-missing"])
        var t = Thresholds()
        t.retryStormAttempts = 50
        t.retryStormSeconds = 10
        t.socketMissingSeconds = 10
        #expect(findingKinds(late, thresholds: t) == [])
    }

    @Test func connectRefused() {
        #expect(findingKinds([started, attempt(1), refused(2), attempt(300), connected(301), finished(900)]) == ["connect-refused"])
        #expect(findingKinds([started, attempt(1), missing(2), attempt(300), connected(301), finished(900)]) == [])
    }

    @Test func slowStartStallAndLowFrameRate() {
        #expect(findingKinds([started, attempt(5), connected(4000), frame(4100), finished(4200)]) == ["slow-start"])
        let gap = [started, attempt(5), connected(10)] + (0..<30).map { frame(100 + Int64($0) * 100) }
            + (0..<30).map { frame(6000 + Int64($0) * 100) } + [finished(9100)]
        #expect(findingKinds(gap) == ["frame-stall"])
        let slow = [started, attempt(5), connected(10)] + (0..<12).map { frame(100 + Int64($0) * 500) } + [finished(6200)]
        #expect(findingKinds(slow) == ["low-frame-rate"])
        var t = Thresholds()
        t.minFps = 1
        #expect(findingKinds(slow, thresholds: t) == [])
    }

    @Test("an in-app capture's frames are frames: a slow one gets low-frame-rate (it trapped: the rule looked only for an extension's frame lines)")
    func lowFrameRateOfAnInAppCapture() {
        let capture: [Row] = [(0, .app, "capture.started", "RPScreenRecorder.shared().startCapture called", [])]
            + (0..<12).map { (100 + Int64($0) * 500, .app, "capture.frame", "RPDaemonProxy: captureHandlerWithSample:", []) }
            + [(6200, .app, "capture.stopped", "RPScreenRecorder.shared().stopCapture completed", [])]
        #expect(findingKinds(capture) == ["low-frame-rate"])
        var t = Thresholds()
        t.minFps = 1
        #expect(findingKinds(capture, thresholds: t) == [])
    }

    @Test func endingsAndHostSuspension() {
        let base = [started, attempt(5), connected(10), frame(100), frame(200)]
        #expect(findingKinds(base + [(300, .extension, "socket.closed", "client connection did close Optional(x)", [("error", "Optional(x)")])]) == ["socket-error"])
        #expect(findingKinds(base + [(300, .extension, "socket.closed", "client connection did close nil", [("error", "nil")])]) == ["stopped-by-host"])
        #expect(findingKinds(base + [(250, .app, "app.suspended", "Calculated state … running-suspended", [("bundle", "org.x")]),
                                     (300, .extension, "socket.closed", "client connection did close nil", [("error", "nil")])])
                == ["host-app-suspended", "stopped-by-host"])
        // Suspended before the broadcast connected: not this finding.
        #expect(!findingKinds([(-500, .app, "app.suspended", "running-suspended", [])] + healthy).contains("host-app-suspended"))
        #expect(findingKinds(base + [(300, .system, "extension.killed_memory", "EXC_RESOURCE",
                                      [("target", "Ext"), ("target_pid", "9"), ("limit_kind", "ActiveHard"), ("limit_mb", "50")])]) == ["extension-killed"])
        #expect(findingKinds(base) == ["abrupt-end"])
        #expect(findingKinds(base + [started, attempt(400), connected(410), finished(500)]) == ["duplicate-session-start"])
    }

    @Test func replayKitAndAppGroup() {
        let rk: Row = (1, .system, "replaykit.error", "RPRecordingErrorDomain Code=-5808", [("code", "-5808")])
        #expect(findingKinds(healthy + [rk]) == ["replaykit-error"])
        let ent: Row = (2, .system, "app_group.not_entitled", "client is not entitled", [])
        #expect(findingKinds(healthy + [ent]) == ["app-group-not-entitled"])
    }

    @Test func relayOrphansAndClockSkew() {
        func relayEvent(_ kind: String, _ us: Int64, _ id: String) -> Event {
            Event(kind: kind, sdk: "relay", side: .relay, time: us, process: nil, pid: nil, message: kind, attrs: [("session", id)],
                  source: SourceRef(path: "relay", line: Int(us / 1000)), order: 1000 + Int(us / 1000), parsedTime: nil, fileIndex: 1)
        }
        // The relay 2 minutes ahead: joined, but clock-skew.
        let skewed = [relayEvent("relay.accepted", 10_000 + 120_000_000, "a"), relayEvent("relay.closed", 3_200_000 + 120_000_000, "a")]
        #expect(findingKinds(healthy, relay: skewed) == ["clock-skew"])
        let near = [relayEvent("relay.accepted", 12_000, "a"), relayEvent("relay.closed", 3_203_000, "a"),
                    relayEvent("relay.accepted", 3_600_000_000, "b")]
        #expect(findingKinds(healthy, relay: near) == ["orphan-relay-session"])
        // An hour away: beyond any plausible clock difference, so not paired.
        let onlyOther = [relayEvent("relay.accepted", 3_600_000_000, "b"), relayEvent("relay.closed", 3_601_000_000, "b")]
        #expect(Set(findingKinds(healthy, relay: onlyOther)) == ["orphan-relay-session", "orphan-device-session"])
    }
}

/// The orphan-relay-session findings are a run of the report's `FindingList`, made when read:
/// the list must read as the findings every rule makes, sorted, would.
@Suite("findings: the orphan relay run in its place")
struct FindingListOrderTests {
    @Test("the run comes where sorting every rule's findings puts it, among bundle findings before and after it")
    func runInPlace() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let odd = try RelayStageTests.oddRelayExport(in: dir)
        let samples = packageRoot.appendingPathComponent("samples").path
        let real = ["apprtcmobile-10-user-alert-invalid-broadcast-session.txt", "livekit-swift-510-host-app-suspended-runningboardd.txt",
                    "jitsi-meet-15969-start-broadcast-app-group-not-entitled.txt"].map { realLogs.appendingPathComponent($0).path }
        for paths in [real + [odd.path], [samples, odd.path], [odd.path], [samples]] {
            var options = AnalyzeOptions()
            options.now = 1_773_306_000_000_000
            var report = try Analyzer(registry: try ParserRegistry.builtin(), options: options).analyze(paths)
            // A skewed clock: a bundle finding of a rule after the orphans'.
            report.clock = ClockEstimate(offset: 90_000_000, uncertainty: nil, pairs: 1, forced: false)
            let t = Thresholds()
            // Every rule's findings, held, in rule order; then sorted as `Findings.run` sorts.
            let all = Findings.rules.flatMap { $0.findings(report, t) }
            let order = Dictionary(uniqueKeysWithValues: report.sessions.enumerated().map { ($1.id, $0) })
            let key: (Int) -> (Int, Int, Int) = { (all[$0].session.flatMap { order[$0] } ?? Int.max, -all[$0].severity.rank, $0) }
            let expected = all.indices.sorted { key($0) < key($1) }.map { all[$0] }
            let list = Findings.run(report, t)
            #expect(list.map(\.kind) == expected.map(\.kind), "\(paths)")
            #expect(list.map(\.message) == expected.map(\.message), "\(paths)")
            #expect(list.map(\.evidence) == expected.map(\.evidence), "\(paths)")
            #expect(FindingTally(list).kinds.map(\.count) == FindingTally(expected).kinds.map(\.count))
            #expect(FindingTally(list).kinds.map(\.bundle) == FindingTally(expected).kinds.map(\.bundle))
            if paths.count == 4 {
                // Real pastes give bundle findings of rules before the orphans' (an error, warnings).
                let kinds = list.filter { $0.session == nil }.map(\.kind)
                let first = try #require(kinds.firstIndex(of: "orphan-relay-session"))
                let last = try #require(kinds.lastIndex(of: "orphan-relay-session"))
                #expect(first >= 2 && last < kinds.count - 1, "\(kinds)")
            }
        }
    }

    @Test("the header names the sessions of each kind, and the bundle's when a kind is also a session's")
    func kindsWithSessionsAndBundle() {
        func f(_ kind: String, _ session: String?) -> Finding {
            Finding(kind: kind, severity: .error, time: nil, session: session, message: "m", evidence: [])
        }
        var tally = FindingTally([f("replaykit-error", "S2"), f("replaykit-error", nil), f("replaykit-error", nil), f("slow-start", "S1"),
                                  f("orphan-relay-session", nil)])
        tally.add(kind: "slow-start", severity: .warning, count: 1)
        #expect(TextReport.kindsWithSessions(tally) == "replaykit-error ×3 (S2, bundle ×2), slow-start ×2 (S1, bundle), orphan-relay-session")
    }
}
