import Testing

@testable import CastscopeKit

@Suite("records")
struct RecordTests {
    @Test("log show: header, preamble and footer skipped; continuation lines joined")
    func appleDefaultMultiline() throws {
        let text = """
            Filtering the log data using "process == 'x'"
            Timestamp                       Thread     Type        Activity             PID    TTL  
            2021-10-27 12:21:13.366628+0200 0x147c5    Default     0x0                  353    0    UVCAssistant: Post PowerLog {
            "VDCAssistant_Power_State" = On;
            }
            2021-10-27 12:21:14.000000+0200 0x147c5    Default     0x0                  353    0    UVCAssistant: next
             --------------------------------------------------------------------------------------------------------------------
            Log      - Default:          2, Info:                0, Debug:             0, Error:          0, Fault:          0
            """
        let r = try records(text, format: "apple-default")
        #expect(r.map { $0["message"] } == ["Post PowerLog {\n\"VDCAssistant_Power_State\" = On;\n}", "next"])
        #expect(r.map { $0["line"] } == ["3", "6"])
    }

    @Test("Xcode: print() lines are records of their own with the time of the nearest timestamped line")
    func xcodePrintLines() throws {
        let text = """
            broadcast started
            2021-12-23 02:56:59.980625+0530 Ext[12:34] hello
            open socket connection
            """
        let r = try records(text, format: "xcode")
        #expect(r.map { $0["message"] } == ["broadcast started", "hello", "open socket connection"])
        #expect(r.map { $0["inferred"] } == ["1", nil, "1"])
        #expect(r.map { $0["pid"] } == ["12", "12", "12"])
    }

    @Test func consoleCopyContinuationStartsWithATab() throws {
        let r = try records("default\t11:35:41.420958+0100\trunningboardd\tAcquiring [\n\t<x>\n\t]>\nerror\t11:35:42.000000+0100\tkernel\tboom\n",
                            format: "console-copy")
        #expect(r.map { $0["message"] } == ["Acquiring [\n\t<x>\n\t]>", "boom"])
    }

    @Test("journal export: binary-safe fields with newlines, unknown fields skipped")
    func journalExport() throws {
        var bytes = Array("__CURSOR=s=1\n__REALTIME_TIMESTAMP=1700000000000000\nSYSLOG_IDENTIFIER=relay\nMESSAGE\n".utf8)
        let message = Array("two\nlines".utf8)
        var size = UInt64(message.count).littleEndian
        bytes += withUnsafeBytes(of: &size) { Array($0) } + message + [0x0A]
        bytes += Array("_PID=7\n\n__REALTIME_TIMESTAMP=1700000000000001\nMESSAGE=plain\n\n".utf8)
        let registry = try ParserRegistry.builtin()
        let reader = RecordReader(format: registry.format(named: "journal-export")!, lines: LineReader(source: MemorySource(bytes), path: "e"))
        var got: [(String?, String?, Int)] = []
        try reader.run { got.append(($0.string(.message), $0.string(.pid), $0.line)) }
        #expect(got.map(\.0) == ["two\nlines", "plain"])
        #expect(got.map(\.1) == ["7", nil])
        #expect(got.map(\.2) == [1, 9])
    }

    @Test("an Xcode paste that lost its line breaks: a record starts at each time, with or without a zone, not at other numbers")
    func xcodeCollapsedRecords() throws {
        let line = "2021-12-23 02:56:59.980625+0530 App[12778:1168260] took 12 ms 2021-12-23 02:57:00.000001 App[12778:1168260] "
            + "fail: 61 2021-12-23 02:57:01.5+0530 App[12778:1168260] done `2021-12-23 02:57:02.0 x"
        let registry = try ParserRegistry.builtin()
        let reader = RecordReader(format: registry.format(named: "xcode")!, lines: LineReader(source: MemorySource(Array((line + "\n").utf8)), path: "x"))
        var got: [String?] = []
        try reader.run { got.append($0.string(.message)) }
        #expect(got == ["took 12 ms", "fail: 61", "done `2021-12-23 02:57:02.0 x"])
    }

    @Test func detectionPicksTheFormatOfEachRealLayout() throws {
        let registry = try ParserRegistry.builtin()
        let detector = FormatDetector(formats: registry.formats)
        func detect(_ s: String) -> String? { Array(s.utf8).withUnsafeBytes { detector.detect(head: $0)?.format.name } }
        #expect(detect("2022-11-14 13:21:14.972 Df My App[59972:780a15] hi\n") == "apple-compact")
        #expect(detect("2021-12-23 02:56:59.980625+0530 Client App[12778:1168260] hi\n") == "xcode")
        #expect(detect("Aug  2 14:36:36 SignalShareExtension(RunningBoardServices)[12841] <Notice>: hi\n") == "idevicesyslog")
        #expect(detect("Mar 14 10:12:31.545053 localhost kernel: x\n") == "journal-short-precise")
        #expect(detect("2023-09-08T17:20:30+0200 tarta fan[1]: x\n") == "journal-short-iso")
        #expect(detect("2023-09-27 22:55:39.622369+0200  localhost x[1]: y\n") == "apple-syslog")
        #expect(detect("just words\n") == "plain")
        #expect(detect("__CURSOR=s=1;i=2\n__REALTIME_TIMESTAMP=1\n") == "journal-export")
    }

    @Test("a record's pid reads as Int(String) would, from the bytes")
    func pidFromBytes() {
        for text in ["123", "-5", "+5", "007", "", "-", "+", "12a", " 5", "5 ", "9223372036854775807", "9223372036854775808",
                     "-9223372036854775808", "-9223372036854775809", "99999999999999999999"]
        {
            var rec = RawRecord()
            rec.reset(line: 1)
            rec.set(.pid, bytes: Array(text.utf8))
            #expect(rec.pid == Int(text), "\(text)")
        }
        var none = RawRecord()
        none.reset(line: 1)
        #expect(none.pid == nil)
    }

    @Test("detection decides on the first lines when one format clearly wins there, else on all")
    func detectionLooksFurtherWhenTheStartIsUnclear() throws {
        let registry = try ParserRegistry.builtin()
        let detector = FormatDetector(formats: registry.formats)
        func detect(_ s: String) -> String? { Array(s.utf8).withUnsafeBytes { detector.detect(head: $0)?.format.name } }
        let logShow = "2023-10-14 17:53:54.688700+0800 0x1e2cd    Error       0x0                  4004   14   App: hi\n"
        let journal = "2023-09-08T17:20:30+0200 tarta fan[1]: x\n"
        let q = FormatDetector.quickLines
        // A clear start decides, even if other lines follow further down.
        #expect(detect(String(repeating: logShow, count: q) + String(repeating: journal, count: 150)) == "apple-default")
        // An unclear start (a third of the first lines are another format's) looks at all.
        let mixed = String(repeating: logShow + logShow + journal, count: q / 3 + 1)
        #expect(detect(mixed + String(repeating: journal, count: 150)) == "journal-short-iso")
        #expect(detect(mixed + String(repeating: logShow, count: 150)) == "apple-default")
    }
}
