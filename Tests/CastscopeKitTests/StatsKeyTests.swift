import Foundation
import Testing

@testable import CastscopeKit

/// `StatsKey`: a relay session's id as the key of its open `stats` run, from the line's bytes or
/// from the event's `String`, the same key either way.
@Suite("open stats runs' keys")
struct StatsKeyTests {
    func key(_ bytes: [UInt8]) -> StatsKey { bytes.withUnsafeBytes { StatsKey(bytes: $0) } }

    @Test("the same id is the same key from bytes and from a String; other ids are other keys")
    func sameAndOther() {
        let ids = ["0000019b-1b7e-4f0e-9a51-2f1d3c4b5a69", "a", "", "x" + String(repeating: "y", count: 47),
                   String(repeating: "z", count: 49), "session-\u{e9}t\u{e9}-42", String(repeating: "0123456789", count: 12)]
        var seen = Set<StatsKey>()
        for id in ids {
            #expect(key(Array(id.utf8)) == StatsKey(id), "\(id)")
            #expect(key(Array(id.utf8)).hashValue == StatsKey(id).hashValue, "\(id)")
            seen.insert(StatsKey(id))
        }
        #expect(seen.count == ids.count)
        // Ids that differ only by trailing zero bytes, by their last byte, or past 48 bytes.
        #expect(key([0x41]) != key([0x41, 0]))
        #expect(key([]) != key([0]))
        #expect(key(Array(repeating: 0x61, count: 48)) != key(Array(repeating: 0x61, count: 47) + [0x62]))
        let long = Array(repeating: UInt8(0x61), count: 60)
        #expect(key(long) != key(long.dropLast() + [0x62]))
        #expect(key(long) == key(long))
        // As a dictionary key among thousands.
        var open: [StatsKey: Int] = [:]
        for i in 0..<5000 { open[StatsKey(String(format: "%08x-1b7e-4f0e-9a51-2f1d3c4b5a69", i))] = i }
        #expect(open.count == 5000)
        #expect(open[key(Array(String(format: "%08x-1b7e-4f0e-9a51-2f1d3c4b5a69", 4321).utf8))] == 4321)
    }
}
