import Foundation
import Testing

/// Issue 11 item 5: finding the one session that matters in a long bundle.
@Suite struct CommandLineNavigationTests {
    func blocks(_ r: RunResult) -> [String] {
        r.stdout.split(separator: "\n").filter { $0.hasPrefix("━━ ") }.map { String($0.split(separator: " ")[1]) }
    }


    var bin: String { packageRoot.appendingPathComponent(".build/debug/castscope").path }

    @Test("--session by id or pid, --only-problems, --min-severity, -g, -n, -r choose the session blocks")
    func selection() throws {
        #expect(blocks(try castscope(["analyze", "samples"])) == ["S1", "S2", "S3", "S4", "S5", "S6", "S7"])
        let one = try castscope(["analyze", "--session", "S3", "samples"])
        #expect(blocks(one) == ["S3"])
        #expect(one.stdout.contains("shown: 1 of 7 sessions (--session S3)\n"))
        #expect(one.stdout.hasPrefix("castscope: 21 files, 617 recognized lines, 7 sessions"))  // the header is the bundle's
        #expect(blocks(try castscope(["analyze", "--session", "pid:915", "samples"])) == ["S3"])
        #expect(blocks(try castscope(["analyze", "--session", "1204", "samples"])) == ["S2"])
        #expect(blocks(try castscope(["analyze", "--session", "s2,7", "samples"])) == ["S2", "S7"])
        #expect(blocks(try castscope(["analyze", "--only-problems", "samples"])) == ["S2", "S3", "S4", "S6", "S7"])
        #expect(blocks(try castscope(["analyze", "--min-severity", "error", "samples"])) == ["S2", "S3", "S6", "S7"])
        #expect(blocks(try castscope(["analyze", "-g", "code 10001", "samples"])) == ["S3", "S6"])
        #expect(blocks(try castscope(["analyze", "-g", "SOCKET FILE", "samples"])).isEmpty)  // capitals: case-sensitive
        #expect(blocks(try castscope(["analyze", "-g", "socket file", "samples"])) == ["S1", "S2"])
        #expect(blocks(try castscope(["analyze", "--only-problems", "-r", "-n", "2", "samples"])) == ["S7", "S6"])
        #expect(try castscope(["analyze", "-n", "0", "samples"]).status == 2)
        #expect(try castscope(["analyze", "-g", "(", "samples"]).status == 2)
        // The other formats carry only the chosen sessions.
        let json = try castscope(["analyze", "--json", "--session", "S3", "samples"])
        #expect((json.json?["sessions"] as? [[String: Any]])?.map { $0["id"] as? String } == ["S3"])
    }

    @Test("-q header only, --oneline one verdict, --list / castscope sessions one line per session")
    func shapes() throws {
        let q = try castscope(["analyze", "-q", "samples"])
        #expect(!q.stdout.contains("━━"))
        #expect(q.stdout.contains("findings: 5 errors, 5 warnings, 1 info — socket-file-missing (S2), never-connected (S2), connect-retry-storm (S2), host-app-suspended ×2 (S3, S6)"))
        let one = try castscope(["analyze", "--oneline", "samples/retry-storm"])
        #expect(one.stdout == "samples/retry-storm: 1 session — 1 failed-to-connect (S1); 2 errors, 1 warning: socket-file-missing (S1), never-connected (S1), connect-retry-storm (S1)\n")
        let list = try castscope(["sessions", "samples"])
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 7)
        #expect(lines[1].hasPrefix("S2    2026-03-12T10:20:00.514204+01:00  3.8 s     failed-to-connect   jitsi BroadcastExtension[1204]  socket-file-missing"))
        #expect(try castscope(["analyze", "--list", "--only-problems", "samples"]).stdout.split(separator: "\n").count == 5)
        #expect(try castscope(["analyze", "--json", "-q", "samples"]).status == 2)
        #expect(try castscope(["analyze", "-q", "--oneline", "samples"]).status == 2)
    }

    @Test("colour: auto on a terminal, never for TERM=dumb, NO_COLOR, when piped; always and CLICOLOR_FORCE for less -R")
    func colour() throws {
        let esc = "\u{1B}["
        #expect(!(try castscope(["analyze", "samples/retry-storm"])).stdout.contains(esc))
        #expect(try castscope(["analyze", "--color", "always", "samples/retry-storm"]).stdout.contains(esc))
        #expect(try castscope(["analyze", "samples/retry-storm"], env: ["CLICOLOR_FORCE": "1", "NO_COLOR": ""]).stdout.contains(esc))
        #expect(!(try castscope(["analyze", "--color", "always", "--no-color", "samples/retry-storm"])).stdout.contains(esc))
        #expect(try onTerminal("'\(bin)' analyze --no-pager samples/retry-storm").contains(esc))
        #expect(!(try onTerminal("'\(bin)' analyze --no-pager samples/retry-storm", env: ["TERM": "dumb"])).contains(esc))
        #expect(!(try onTerminal("'\(bin)' analyze --no-pager samples/retry-storm", env: ["NO_COLOR": "1"])).contains(esc))
    }

    @Test("a pager on a terminal ($PAGER, less -R), never when piped or with --no-pager")
    func pager() throws {
        // A stand-in pager that marks every line, so that the test sees it ran.
        let paged = try onTerminal("'\(bin)' analyze samples/retry-storm", env: ["PAGER": "sed s/^/PAGED:/"])
        #expect(paged.contains("PAGED:"))
        let less = try onTerminal("'\(bin)' analyze samples/retry-storm", env: ["PAGER": "sh -c 'echo LESS=$LESS; cat >/dev/null'"])
        #expect(less.contains("LESS=FRX"))
        #expect(!(try onTerminal("'\(bin)' analyze --no-pager samples/retry-storm", env: ["PAGER": "sed s/^/PAGED:/"])).contains("PAGED:"))
        #expect(!(try castscope(["analyze", "samples/retry-storm"], env: ["PAGER": "sed s/^/PAGED:/"])).stdout.contains("PAGED:"))
    }
}
