package org.jflannel.backend.wireguard;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import org.jflannel.backend.wireguard.crypto.X25519;
import org.jflannel.core.ConfigException;

/**
 * The node's WireGuard private key, as upstream keeps it: {@code /run/flannel/wgkey} or the file
 * named by {@code WIREGUARD_KEY_FILE}; read when present (base64, as {@code wg genkey} writes),
 * else generated once and written 0400 in a 0700 directory, so the public key in the lease
 * survives restarts and changes only when the file is removed.
 */
final class KeyFile {
    static final Path DEFAULT = Path.of("/run/flannel/wgkey");
    static final String ENV = "WIREGUARD_KEY_FILE";

    private KeyFile() {
    }

    static Path path(Map<String, String> env) {
        String p = env.get(ENV);
        return p == null || p.isEmpty() ? DEFAULT : Path.of(p);
    }

    /** The private key in {@code file}, created first when absent. */
    static byte[] loadOrCreate(Path file, SecureRandom random) throws IOException, ConfigException {
        try {
            return parse(Files.readString(file, StandardCharsets.US_ASCII), file);
        } catch (NoSuchFileException e) {
            // first start: create below
        }
        byte[] key = X25519.generatePrivate(random);
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null && !Files.isDirectory(dir)) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (FileAlreadyExistsException e) {
            return parse(Files.readString(file, StandardCharsets.US_ASCII), file); // another process won the race
        }
        Files.writeString(file, Base64.getEncoder().encodeToString(key), StandardCharsets.US_ASCII);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--------"));
        return key;
    }

    static byte[] parse(String text, Path file) throws ConfigException {
        byte[] key;
        try {
            key = Base64.getDecoder().decode(text.strip());
        } catch (IllegalArgumentException e) {
            throw new ConfigException(ENV, "could not read private key file " + file + ": wgtypes: failed to parse base64-encoded key");
        }
        if (key.length != 32) {
            throw new ConfigException(ENV, "could not read private key file " + file + ": wgtypes: incorrect key size: " + key.length);
        }
        return key;
    }
}
