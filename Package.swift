// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "castscope",
    products: [
        .executable(name: "castscope", targets: ["castscope"]),
        .library(name: "CastscopeKit", targets: ["CastscopeKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        // C system libraries, each behind a small Swift wrapper in CastscopeKit/Input.
        .systemLibrary(name: "CCastscopeSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CCastscopeZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // libarchive is opened by the library when the first archive is met (Input/LibArchive.swift:
        // linking it costs every start ~1.2 ms); the tests link it to write archives.
        // LZ4 blocks of Apple Unified Logging chunksets (Records/UnifiedLog/LZ4.swift).
        .systemLibrary(name: "CCastscopeLZ4", pkgConfig: "liblz4", providers: [.apt(["liblz4-dev"])]),
        .systemLibrary(name: "CCastscopeArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        // glibc's malloc_trim (part of libc: no library to link), behind Sessions/FreedMemory.swift.
        .systemLibrary(name: "CCastscopeMalloc"),
        // A SIGBUS handler for mapped files cut short while read (Input/MappedFile.swift).
        .systemLibrary(name: "CCastscopeSignals"),
        .target(
            name: "CastscopeKit",
            dependencies: ["CCastscopeSystemd", "CCastscopeZlib", "CCastscopeLZ4", "CCastscopeMalloc", "CCastscopeSignals"],
            // Release builds skip the run-time exclusivity checks (the compile-time ones stay;
            // debug builds and tests keep both): they were 2.4 % of the instructions on
            // noisy text, paid on every access to a class's stored property in the hot loops.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .executableTarget(
            name: "castscope",
            dependencies: [
                "CastscopeKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "CastscopeKitTests", dependencies: ["CastscopeKit", "CCastscopeArchive"]),
    ]
)
