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
        .systemLibrary(name: "CCastscopeArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        .target(
            name: "CastscopeKit",
            dependencies: ["CCastscopeSystemd", "CCastscopeZlib", "CCastscopeArchive"]
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
