// libFuzzer entry point, compiled together with the library's sources into one module by
// Fuzz/run.py (`swiftc -sanitize=fuzzer[,address]`; SwiftPM's route does not work here).
// CASTSCOPE_FUZZ_TARGET picks the stage: pipeline (default), export, ndjson, journal-json,
// xcode, gzip, archive, sanitize, tracev3, ulstrings.

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

let fuzzTarget: String = {
    guard let v = getenv("CASTSCOPE_FUZZ_TARGET") else { return "pipeline" }
    return String(cString: v)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func castscopeFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    switch fuzzTarget {
    case "pipeline": FuzzEntry.pipeline(bytes)
    case "export": FuzzEntry.pipeline(bytes, forcedFormat: "journal-export")
    case "ndjson": FuzzEntry.pipeline(bytes, forcedFormat: "apple-ndjson")
    case "journal-json": FuzzEntry.pipeline(bytes, forcedFormat: "journal-json")
    case "xcode": FuzzEntry.pipeline(bytes, forcedFormat: "xcode")
    case "gzip": FuzzEntry.gzip(bytes)
    case "archive": FuzzEntry.archive(bytes)
    case "sanitize": FuzzEntry.sanitize(bytes)
    case "tracev3": FuzzEntry.tracev3(bytes)
    case "ulstrings": FuzzEntry.stringFiles(bytes)
    default:
        fputs("unknown CASTSCOPE_FUZZ_TARGET \(fuzzTarget)\n", stderr)
        exit(2)
    }
    return 0
}
