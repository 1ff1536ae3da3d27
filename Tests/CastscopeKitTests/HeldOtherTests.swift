import Foundation
import Testing

@testable import CastscopeKit

/// `.ips` reports and Apple's unified log beside text logs, held, with and without a window.
@Suite("held: ips and unified log")
struct HeldOtherTests {
    @Test func ipsAndTracev3() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try jetsamIPS.write(to: dir.appendingPathComponent("JetsamEvent.ips"), atomically: true, encoding: .utf8)
        try crashIPS.write(to: dir.appendingPathComponent("BroadcastExtension.ips"), atomically: true, encoding: .utf8)
        let ul = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/unified-logging")
        let bundles: [[String]] = [
            [dir.path, packageRoot.appendingPathComponent("samples/jetsam-kill").path],
            [packageRoot.appendingPathComponent("samples/jetsam-kill").path, dir.path, ul.appendingPathComponent("0000000000000030.tracev3").path],
            [ul.path, packageRoot.appendingPathComponent("samples/retry-storm").path],
        ]
        var heldAny = false
        for (k, paths) in bundles.enumerated() {
            for w in [(nil, nil), (Int64(1_773_356_390_000_000), nil)] as [(Int64?, Int64?)] {
                let m = try HeldFuzzTests.run(paths, held: false, window: w, parallel: false)
                let h = try HeldFuzzTests.run(paths, held: true, window: w, parallel: false)
                heldAny = heldAny || h.hasSuffix("held true")
                #expect(m.replacingOccurrences(of: "\nheld false", with: "") == h.replacingOccurrences(of: "\nheld true", with: ""), "bundle \(k)")
            }
        }
        #expect(heldAny)
    }
}
