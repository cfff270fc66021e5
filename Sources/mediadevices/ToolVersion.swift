/// The version `mediadevices --version` prints: the newest released version in CHANGELOG.md
/// (its newest `## X.Y.Z - date` heading). Changes listed under "Unreleased" have no number
/// until they are released, so a build with them still prints the last release.
/// `ToolVersionTests` fails when this and CHANGELOG.md differ: bump both when releasing.
enum ToolVersion {
    /// The newest version heading of CHANGELOG.md.
    static let current = "0.1.0"
}
