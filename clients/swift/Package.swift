// swift-tools-version:5.7
import PackageDescription

let package = Package(
    name: "Matchpoint",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "Matchpoint", targets: ["Matchpoint"]),
    ],
    targets: [
        .target(name: "Matchpoint"),
        .testTarget(name: "MatchpointTests", dependencies: ["Matchpoint"]),
    ]
)
