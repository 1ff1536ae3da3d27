import Foundation
import Testing

@testable import CastscopeKit

@Suite("ClickHouse rows, ids, URL and DDL (no server)")
struct ClickHouseRowsTests {
    @Test("session and finding rows go out in batches of at most batchRows, the same bytes as one buffer")
    func sessionAndFindingBatches() throws {
        let analyzer = try Analyzer(registry: try ParserRegistry.builtin(), options: AnalyzeOptions())
        let r = analyzer.analyze([packageRoot.appendingPathComponent("samples/relay").path,
                                  packageRoot.appendingPathComponent("samples/mixed-bundle/support-bundle.tar.gz").path])
        let rows = ClickHouseRows(bundleId: "b", version: 1)
        typealias Fill = (inout ClickHouseRowBuffer, Int, (inout ClickHouseRowBuffer) -> Void) -> Void
        let tables: [(String, Fill)] = [
            ("sessions", { b, n, emit in rows.sessions(r, into: &b, batchRows: n, emit: emit) }),
            ("findings", { b, n, emit in rows.findings(r, into: &b, batchRows: n, emit: emit) }),
        ]
        for (name, fill) in tables {
            var whole = ClickHouseRowBuffer()
            fill(&whole, .max) { _ in Issue.record("\(name): a batch without a limit") }
            #expect(whole.rows >= 5, "\(name)")
            var batched: [UInt8] = []
            var batches: [Int] = []
            var b = ClickHouseRowBuffer()
            fill(&b, 2) { full in
                batches.append(full.rows)
                batched += full.bytes
                full = ClickHouseRowBuffer()
            }
            batched += b.bytes
            #expect(batched == whole.bytes, "\(name)")
            #expect(batches.count == whole.rows / 2 && batches.allSatisfy { $0 == 2 }, "\(name): \(batches)")
        }
    }

    @Test("the digest depends on the bytes only, not on how they were fed, and tells inputs apart")
    func digestSplits() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var whole = Digest128()
        bytes.withUnsafeBytes { whole.update($0) }
        for cut in [1, 7, 31, 32, 33, 500, 999] {
            var parts = Digest128()
            bytes[..<cut].withUnsafeBytes { parts.update($0) }
            bytes[cut...].withUnsafeBytes { parts.update($0) }
            #expect(parts.hex() == whole.hex(), "cut at \(cut)")
        }
        var other = bytes
        other[500] ^= 1
        var changed = Digest128()
        other.withUnsafeBytes { changed.update($0) }
        #expect(changed.hex() != whole.hex())
        #expect(whole.hex().count == 32)
        #expect(Digest128.of("ab", "c") != Digest128.of("a", "bc"))
        #expect(Digest128().hex() != Digest128.of(""))
    }

    @Test("ids made without Strings are the ids made from Strings: a number fed as digits, the hex written into a buffer, a record id continued from its file's prefix")
    func digestWithoutStrings() {
        // A known value: a change of the digest changes every id in a fleet's tables (so that
        // rows of a newer castscope would no longer replace the old ones).
        #expect(Digest128.of("castscope", "42") == "61dee6f989fe4a3b675c5105b725aabb")
        for v in [0, 7, 10, 99, 12345, -1, -42, Int.max, Int.min] {
            var a = Digest128(), b = Digest128()
            a.update("x"); b.update("x")
            a.update(String(v))
            b.update(decimal: v)
            #expect(a.hex() == b.hex(), "\(v)")
            var out = OutputBuffer()
            b.hex(into: &out)
            #expect(out.string == a.hex())
            // The hex digits as String(radix:) gives them, zero-padded to 16 per half.
            #expect(a.hex().allSatisfy { "0123456789abcdef".contains($0) } && a.hex().count == 32)
        }
        let rows = ClickHouseRows(bundleId: "b")
        for line in [1, 42, 1_000_000] {
            #expect(rows.recordId(path: "/x/y.log", line: line) == Digest128.of("b", "/x/y.log", String(line)))
        }
    }

    @Test("URL: host, port, database, credentials from the URL or the environment; the password never shown")
    func endpoint() throws {
        let e = try ClickHouseEndpoint(url: "http://ops:s%40cret@ch.internal:8124/?database=fleet", environment: { _ in nil })
        #expect(e.host == "ch.internal" && e.port == 8124 && e.database == "fleet" && e.user == "ops" && e.password == "s@cret")
        #expect(!e.description.contains("s@cret") && !e.description.contains("cret"))
        let env = try ClickHouseEndpoint(url: "http://127.0.0.1/", environment: { ["CLICKHOUSE_USER": "u", "CLICKHOUSE_PASSWORD": "pw"][$0] })
        #expect(env.port == 8123 && env.user == "u" && env.password == "pw" && !env.description.contains("pw"))
        #expect(throws: ClickHouseEndpoint.Invalid.self) { try ClickHouseEndpoint(url: "https://x/") }
        #expect(throws: ClickHouseEndpoint.Invalid.self) { try ClickHouseEndpoint(url: "http://x:99999/") }
        #expect(ClickHouseEndpoint.redact("http://a:secret@h:1/?password=other&x=1") == "http://a:***@h:1/?password=***&x=1")
    }

    @Test("JSONEachRow: control characters, quotes and non-ASCII escaped; one line per row; every column present")
    func rowsAreJSON() throws {
        var b = ClickHouseRowBuffer()
        b.begin()
        b.string("Body", "a \"q\" \\ tab\t nl\n bell\u{07} é")
        b.optionalInt("Pid", nil)
        b.double("X", .nan)
        b.strings("E", ["x", "y\"z"])
        b.dateTime("Timestamp", 1_700_000_000_999_999)
        b.end()
        let text = String(decoding: b.bytes, as: UTF8.self)
        #expect(text.hasSuffix("}\n") && text.filter { $0 == "\n" }.count == 1)
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(b.bytes)) as? [String: Any])
        #expect(obj["Body"] as? String == "a \"q\" \\ tab\t nl\n bell\u{07} é")
        #expect(obj["Pid"] is NSNull && obj["X"] is NSNull)
        #expect(obj["E"] as? [String] == ["x", "y\"z"])
        #expect(obj["Timestamp"] as? Int == 1_700_000_000)
    }

    @Test("the samples' rows: every table's columns exactly as in the DDL, ids unique, and the same bytes twice")
    func samplesRows() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var files: [String: Data] = [:]
        for round in 0..<2 {
            let out = dir.appendingPathComponent("r\(round)")
            let r = try castscope(["analyze", "samples/", "--clickhouse", "file://" + out.path])
            #expect(r.status == 0, "\(r.stderr)")
            for t in ClickHouseSchema.tables {
                let data = try Data(contentsOf: out.appendingPathComponent(t + ".jsonl"))
                if round == 0 { files[t] = data } else { #expect(files[t] == data, "\(t) differs between two analyses") }
            }
        }
        for t in ClickHouseSchema.tables {
            let columns = ClickHouseSchema.columns[t]!.map(\.0)
            var ids = Set<String>()
            for line in files[t]!.split(separator: 0x0A) {
                let obj = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
                #expect(Set(obj.keys) == Set(columns), "\(t)")
                ids.insert(obj[ClickHouseSchema.keys[t]!] as! String)
            }
            #expect(ids.count == files[t]!.split(separator: 0x0A).count, "\(t): ids not unique")
        }
    }

    @Test("DDL: four ReplacingMergeTree tables, with a cluster four more Distributed ones; statements split one by one")
    func ddl() {
        let single = ClickHouseSchema.statements(ClickHouseSchema.ddl())
        #expect(single.count == 4 && single.allSatisfy { $0.contains("ReplacingMergeTree(Version)") && !$0.hasSuffix(";") })
        let cluster = ClickHouseSchema.statements(ClickHouseSchema.ddl(cluster: "fleet", database: "db", ttlDays: 30))
        #expect(cluster.count == 8)
        #expect(cluster.filter { $0.contains("ENGINE = Distributed(fleet, 'db', castscope_") }.count == 4)
        #expect(cluster.allSatisfy { $0.contains("ON CLUSTER fleet") })
        #expect(cluster.filter { $0.contains("TTL Timestamp + INTERVAL 30 DAY") }.count == 4)
        #expect(!ClickHouseSchema.ddl(cluster: "fleet", onCluster: false).contains("ON CLUSTER"))
    }
}

/// `analyze --clickhouse` when sessions are handed on as they end: each session's rows are made
/// then (`ClickHouseStreamExport`). The files must be those of the whole-report export, which
/// the CLI takes when another output needs the whole report (`--html`).
@Suite("ClickHouse rows as sessions end")
struct ClickHouseStreamTests {
    @Test("the same four JSONEachRow files, streamed or from the whole report: samples, 300 sessions, a dense log")
    func sameFilesAsTheWholeReport() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var inputs = ["healthy-jitsi", "stopped-10001", "retry-storm", "jetsam-kill", "sendbird-call-ended", "mixed-bundle"]
            .map { packageRoot.appendingPathComponent("samples/\($0)").path }
        inputs.append(try manySessionsLog(300, in: dir).path)
        inputs.append(try denseBenchLog(megabytes: 3, in: dir).path)
        // Sessions handed on with findings, and findings of the bundle's own after them (a
        // crash outside any session): both kinds of finding rows, in the report's order.
        let mixed = dir.appendingPathComponent("sessions-then-bundle-findings.log")
        try """
            2026-03-12 10:00:00.000001+0100 BroadcastExtension[812:1] broadcast started
            2026-03-12 10:00:00.100001+0100 BroadcastExtension[812:1] open socket connection
            2026-03-12 10:00:00.200001+0100 BroadcastExtension[812:1] failure: socket file missing
            2026-03-12 10:00:05.000001+0100 BroadcastExtension[812:1] broadcastFinished
            2026-03-12 10:05:00.000001+0100 JitsiDemo[640:1] *** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: 'boom'

            """.write(to: mixed, atomically: true, encoding: .utf8)
        inputs.append(mixed.path)
        for (k, input) in inputs.enumerated() {
            let streamed = dir.appendingPathComponent("streamed-\(k)"), whole = dir.appendingPathComponent("whole-\(k)")
            let a = try castscope(["analyze", input, "--clickhouse", "file://" + streamed.path])
            let b = try castscope(["analyze", input, "--clickhouse", "file://" + whole.path,
                                   "--html", dir.appendingPathComponent("r-\(k).html").path])
            #expect(a.status == b.status && a.stdout == b.stdout, "\(input)")
            for table in ClickHouseSchema.tables {
                let x = try? Data(contentsOf: streamed.appendingPathComponent(table + ".jsonl"))
                let y = try? Data(contentsOf: whole.appendingPathComponent(table + ".jsonl"))
                #expect(x == y, "\(input): \(table)")
            }
            let events = try String(contentsOf: streamed.appendingPathComponent("castscope_events.jsonl"), encoding: .utf8)
            #expect(events.split(separator: "\n").count > (input == mixed.path ? 3 : 10), "\(input): rows were written")
            if input == mixed.path {
                let findings = try String(contentsOf: streamed.appendingPathComponent("castscope_findings.jsonl"), encoding: .utf8)
                #expect(findings.contains("\"app-crashed\"") && findings.contains("\"never-connected\""), "\(findings)")
            }
        }
    }
}

/// A bundle with relay lines hands its sessions on after the join (since session 43: before, it
/// kept them all for the report): the rows streamed are the whole report's export's, relay
/// times, the clock columns, relay-only sessions and their orphan findings included.
@Suite("ClickHouse rows of a bundle with relay lines, handed on after the join")
struct ClickHouseRelayStreamTests {
    @Test("the same four files as the whole report's export: the relay sample, the mixed bundle, a phone beside its relay")
    func relayBundlesStreamed() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A phone's 40 broadcasts beside their relay's export (the relay 2.5 s ahead) and other
        // phones' relay sessions: joined pairs, orphans on both sides, a clock offset.
        let join = dir.appendingPathComponent("join")
        let gen = try runShell("exec python3 \"$0\" 3 40 20 6 2.5 \"$1\"", [packageRoot.appendingPathComponent("scripts/make-join-bundle.py").path, join.path])
        #expect(gen.status == 0, "\(gen.stderr)")
        let inputs = [packageRoot.appendingPathComponent("samples/relay").path, packageRoot.appendingPathComponent("samples/mixed-bundle").path, join.path]
        var sawClock = false
        for (k, input) in inputs.enumerated() {
            let bundleId = "bundle-\(k)"
            // The whole report, exported.
            let whole = try Analyzer(registry: ParserRegistry.builtin()).analyze([input])
            #expect(whole.streamed == nil && !whole.relaySessions.isEmpty, "\(input)")
            let wholeDir = dir.appendingPathComponent("whole-\(k)").path
            let w = ClickHouseExport(target: .directory(wholeDir)).write(whole, bundleId: bundleId)
            #expect(w.failed.isEmpty)
            // Handed on, as `analyze --clickhouse` does.
            let streamedDir = dir.appendingPathComponent("streamed-\(k)").path
            let analyzer = try Analyzer(registry: ParserRegistry.builtin())
            analyzer.keepsSessionFindings = false
            var stream: ClickHouseStreamExport?
            analyzer.willStreamSessions = { partial in
                stream = ClickHouseStreamExport(ClickHouseExport(target: .directory(streamedDir)), bundleId: bundleId)
                stream?.clock = partial.clock
            }
            analyzer.sessionSink = SessionSink(take: { s, f, _ in stream?.add(s, f) })
            let report = analyzer.analyze([input])
            #expect(report.streamed != nil && report.sessions.isEmpty, "\(input): handed on")
            #expect(report.streamed?.count == whole.sessions.count)
            let r = try #require(stream).finish(report)
            #expect(r.failed.isEmpty)
            if whole.clock != nil { sawClock = true }
            for table in ClickHouseSchema.tables {
                let x = try? Data(contentsOf: URL(fileURLWithPath: streamedDir).appendingPathComponent(table + ".jsonl"))
                let y = try? Data(contentsOf: URL(fileURLWithPath: wholeDir).appendingPathComponent(table + ".jsonl"))
                #expect(x != nil && x == y, "\(input): \(table)")
            }
        }
        #expect(sawClock)
    }
}

/// The bundle's id is its files' digest, read on a thread of its own: sessions handed on
/// before it is known wait (at most `maxWaiting`, then the next one waits for the id) and their
/// rows are made once it is, the same rows as with the id known from the start.
@Suite("ClickHouse rows before the bundle id is known")
struct ClickHouseDeferredIdTests {
    @Test("the same files whether the id is known at once, after 40 sessions, or only at the end")
    func sameRowsWhenTheIdComesLate() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try manySessionsLog(120, in: dir)
        var handed: [(Session, [Finding])] = []
        let analyzer = try Analyzer(registry: try ParserRegistry.builtin())
        analyzer.keepsSessionFindings = false
        analyzer.onSession = { s, f in handed.append((s, f)) }
        let report = analyzer.analyze([log.path])
        #expect(handed.count == 120)
        func export(_ name: String, maxWaiting: Int, knownAfter: Int?) throws -> [String: Data] {
            let out = dir.appendingPathComponent(name)
            var polls = 0, waits = 0
            let stream = ClickHouseStreamExport(ClickHouseExport(target: try ClickHouseTarget.parse("file://" + out.path)),
                                                bundleIdIfKnown: {
                                                    polls += 1
                                                    return knownAfter.map { polls > $0 } == true ? "bundle-1" : nil
                                                }, waitForBundleId: { waits += 1; return "bundle-1" })
            stream.maxWaiting = maxWaiting
            for (s, f) in handed { stream.add(s, f) }
            #expect(stream.finish(report).failed.isEmpty)
            #expect(waits == (knownAfter == nil ? 1 : 0), "\(name): waited \(waits) times")
            var files: [String: Data] = [:]
            for table in ClickHouseSchema.tables { files[table] = try Data(contentsOf: out.appendingPathComponent(table + ".jsonl")) }
            return files
        }
        let atOnce = try export("at-once", maxWaiting: 256, knownAfter: 0)
        #expect(atOnce["castscope_sessions"].map { String(decoding: $0, as: UTF8.self).split(separator: "\n").count } == 120)
        #expect(try export("after-40", maxWaiting: 256, knownAfter: 40) == atOnce)
        // Never known by polling: the 256 allowed to wait are more than the sessions, so the
        // id is waited for once, at the end.
        #expect(try export("at-the-end", maxWaiting: 256, knownAfter: nil) == atOnce)
        // Never known by polling, and only 10 may wait: the 11th session waits for it.
        #expect(try export("waited-for", maxWaiting: 10, knownAfter: nil) == atOnce)
    }
}
