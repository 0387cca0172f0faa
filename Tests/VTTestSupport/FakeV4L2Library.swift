import Foundation

/// The fake camera's LD_PRELOAD library, compiled from Tests/FakeV4L2/*.c into .build/fake-v4l2
/// on first use; and the small test clients in Tests/FakeV4L2/clients.
public enum FakeV4L2Library {
    public typealias BuildFailed = CBuild.Failed

    /// The package's root directory.
    public static var packageRoot: URL { CBuild.packageRoot }

    /// The built library's path; builds it on first use.
    public static func path() throws -> String {
        try CBuild.product(".build/fake-v4l2/libfakev4l2.so") { partial in
            try ["cc", "-std=c11", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o", partial]
                + CBuild.sharedIncludes + CBuild.sources(in: "Tests/FakeV4L2") + CBuild.pkgConfig(["--cflags", "--libs", "libturbojpeg", "x264"])
                + ["-ldl", "-lpthread", "-lm"]
        }
    }

    /// A test client from Tests/FakeV4L2/clients/<name>.c, linked with libv4l2; built on first
    /// use. It is run with the camera's environment like any other program.
    public static func client(_ name: String) throws -> String {
        try CBuild.product(".build/fake-v4l2/\(name)") { partial in
            ["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-o", partial,
             CBuild.path("Tests/FakeV4L2/clients/\(name).c"), "-lv4l2"]
        }
    }
}
