import Testing

@testable import CastscopeKit

/// A long list of events written to the spill in one record (`HeldEvents` writes 8,192 at a
/// time; a relay's held stats runs are ~2 KB each) goes to the file as it is written: the write
/// buffer stays about a megabyte, not the list's size (issue 15: 16 MB, and twice that while it
/// grew, in a year-less relay text with 5,000 sessions open), and the list comes back whole.
@Suite("the spill's write buffer while a long list is written")
struct SpillBufferTests {
    /// A relay session's stats run of `lines` lines, as the reader folds it.
    static func run(_ n: Int, lines: Int) -> Event {
        var e = Event(kind: "relay.stats", sdk: "relay", side: .relay, time: Int64(n) * 1_000_000, process: "broadcast-relay", pid: 811,
                      message: "session \(n) stats frames=10 bytes=281000 fps=10.0 dropped=0",
                      attrs: [("session", "\(n)"), ("frames", "10"), ("fps", "10.0"), ("dropped", "0")],
                      source: SourceRef(path: "relay.log", line: n * 100 + 1), order: n, parsedTime: nil, fileIndex: 0)
        let r = Repeats()
        for k in 0..<lines {
            r.lines.append(Int32(n * 100 + 1 + k))
            r.times.append(Int64(n) * 1_000_000 + Int64(k) * 1_000)
            r.addStats(e.attrs)
        }
        e.repeats = r
        return e
    }

    @Test func aLongListGoesOutAsItIsWritten() {
        let spill = try! #require(EventSpill())
        let events = (0..<4_000).map { Self.run($0, lines: 60) }
        let chunk = spill.write(events)
        #expect(chunk.length > 6 << 20, "\(chunk.length) bytes written")
        #expect(spill.bufferCapacity <= 2 << 20, "the buffer has room for \(spill.bufferCapacity) bytes")
        // A small record after it, then both read back as written.
        let small = spill.write([Self.run(9_999, lines: 3)])
        let back = spill.read(chunk)
        #expect(back.count == events.count)
        for i in [0, 1, 1_234, 3_999] {
            #expect(back[i].message == events[i].message && back[i].line == events[i].line && back[i].time == events[i].time)
            #expect(Array(back[i].repeats!.lines) == Array(events[i].repeats!.lines))
            #expect(Array(back[i].repeats!.times) == Array(events[i].repeats!.times))
            #expect(back[i].repeats!.frames == events[i].repeats!.frames)
        }
        #expect(spill.read(small).first?.repeats?.lines.count == 3)
    }
}
