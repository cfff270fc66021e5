import Glibc

/// Standard output as a data stream (`capture --output -`): the data gets the real standard
/// output, and everything the tool prints from then on goes to standard error, so a pipe into
/// `ffplay -` or `ffmpeg -i -` carries nothing but the stream.
enum StandardOutput {
    /// Sets the real standard output aside for the data and points descriptor 1 (so `print`) at
    /// standard error. Returns the descriptor to write the data to.
    static func setAsideForData() -> Int32 {
        let data = dup(STDOUT_FILENO)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        return data < 0 ? STDOUT_FILENO : data
    }
}
