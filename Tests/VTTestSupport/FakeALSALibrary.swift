import Foundation

/// The fake microphone's ALSA plugin, compiled from Tests/FakeALSA/*.c into .build/fake-alsa on
/// first use; and the small test clients in Tests/FakeALSA/clients.
public enum FakeALSALibrary {
    public typealias BuildFailed = CBuild.Failed

    /// The built plugin's path; builds it on first use. The name is the one alsa-lib looks for
    /// in its plugin directory (libasound_module_pcm_TYPE.so), though configurations name it by
    /// path. `-DPIC` selects the dynamic form of the plugin's version symbol; `-z nodelete` keeps
    /// the library, and the microphones' fault schedules, loaded when alsa-lib lets it go.
    public static func path() throws -> String {
        try CBuild.product(".build/fake-alsa/libasound_module_pcm_vtfake.so") { partial in
            try ["cc", "-std=c11", "-shared", "-fPIC", "-DPIC", "-O2", "-Wall", "-Wextra", "-Wl,-z,nodelete",
                 "-o", partial]
                + CBuild.sharedIncludes + CBuild.sources(in: "Tests/FakeALSA") + CBuild.pkgConfig(["--cflags", "--libs", "alsa"])
                + ["-lm", "-lpthread"]
        }
    }

    /// A test client from Tests/FakeALSA/clients/<name>.c, linked with libasound; built on first
    /// use. It is run with a configuration's environment like any other program.
    public static func client(_ name: String) throws -> String {
        try CBuild.product(".build/fake-alsa/\(name)") { partial in
            try ["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-o", partial,
                 CBuild.path("Tests/FakeALSA/clients/\(name).c")] + CBuild.pkgConfig(["--cflags", "--libs", "alsa"])
        }
    }
}
