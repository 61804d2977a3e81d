import java.io.IOException;
import java.io.OutputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.MethodModel;
import java.lang.classfile.attribute.CodeAttribute;
import java.lang.classfile.attribute.StackMapFrameInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * The image build's jar slimmer (packaging/build-image.sh, docs/image.md): rewrites each jar given with its
 * classes' LocalVariableTable and LocalVariableTypeTable left out, and nothing else changed. Those two
 * attributes serve only a debugger showing local variables' names; line numbers (stack traces), source
 * file names, signatures, annotations and parameter names stay. Each method's bytecode, exception table
 * and stack maps are checked to be byte for byte what they were, so a class cannot come out different
 * in what it does; a jar that is signed, or a class this JDK cannot parse, fails the build.
 *
 *   java StripLocalVariables.java JAR...    (Temurin 25: java.lang.classfile; each JAR replaced in place)
 *
 * Entries keep their order, names, times and storage method; deflated ones are deflated at level 9, but the
 * manifest is stored: reading a deflated one is what loads libzip.so and the Inflater into a JVM whose classes all
 * come from its class-data archive (the CNI plugin's logger lookup, docs/image.md), ~1 ms a call for ~100 bytes.
 */
public final class StripLocalVariables {

    private static final ClassFile STRIP = ClassFile.of(ClassFile.DebugElementsOption.DROP_DEBUG);

    private StripLocalVariables() {
    }

    public static void main(String[] args) throws IOException {
        for (String jar : args) {
            Path in = Path.of(jar);
            Path tmp = in.resolveSibling(in.getFileName() + ".strip.tmp");
            long before = Files.size(in);
            rewrite(in, tmp);
            Files.move(tmp, in, StandardCopyOption.REPLACE_EXISTING);
            System.err.println("strip-local-variables: " + jar + " " + before + " -> " + Files.size(in) + " bytes");
        }
    }

    private static void rewrite(Path in, Path out) throws IOException {
        try (ZipFile zip = new ZipFile(in.toFile()); OutputStream file = Files.newOutputStream(out);
             ZipOutputStream zo = new ZipOutputStream(file)) {
            zo.setLevel(9);
            for (Enumeration<? extends ZipEntry> e = zip.entries(); e.hasMoreElements();) {
                ZipEntry entry = e.nextElement();
                String name = entry.getName();
                if (name.startsWith("META-INF/") && (name.endsWith(".SF") || name.endsWith(".RSA") || name.endsWith(".DSA") || name.endsWith(".EC"))) {
                    throw new IOException(in + ": signed jar (" + name + "): its signatures would no longer match");
                }
                byte[] bytes = zip.getInputStream(entry).readAllBytes();
                if (name.endsWith(".class")) {
                    bytes = strip(in + "!" + name, bytes);
                }
                ZipEntry copy = new ZipEntry(name);
                copy.setTime(entry.getTime());
                if (entry.getMethod() == ZipEntry.STORED || name.equals("META-INF/MANIFEST.MF")) {
                    CRC32 crc = new CRC32();
                    crc.update(bytes);
                    copy.setMethod(ZipEntry.STORED);
                    copy.setSize(bytes.length);
                    copy.setCompressedSize(bytes.length);
                    copy.setCrc(crc.getValue());
                }
                zo.putNextEntry(copy);
                zo.write(bytes);
                zo.closeEntry();
            }
        }
    }

    private static byte[] strip(String where, byte[] original) throws IOException {
        ClassModel before = STRIP.parse(original);
        // every method body is rebuilt, which is where DROP_DEBUG leaves the two tables out
        byte[] stripped = STRIP.transformClass(before, ClassTransform.transformingMethodBodies(CodeTransform.ACCEPT_ALL));
        ClassModel after = ClassFile.of().parse(stripped);
        List<MethodModel> a = before.methods();
        List<MethodModel> b = after.methods();
        if (a.size() != b.size()) {
            throw new IOException(where + ": method count changed");
        }
        for (int i = 0; i < a.size(); i++) {
            CodeAttribute x = a.get(i).findAttribute(Attributes.code()).orElse(null);
            CodeAttribute y = b.get(i).findAttribute(Attributes.code()).orElse(null);
            if ((x == null) != (y == null)) {
                throw new IOException(where + ": " + a.get(i).methodName() + ": code attribute changed");
            }
            if (x != null && (!Arrays.equals(x.codeArray(), y.codeArray())
                    || x.maxStack() != y.maxStack() || x.maxLocals() != y.maxLocals()
                    || !exceptionTable(x).equals(exceptionTable(y))
                    || !stackMaps(x).equals(stackMaps(y)))) {
                throw new IOException(where + ": " + a.get(i).methodName() + ": bytecode, exception table or stack maps changed");
            }
        }
        return stripped.length < original.length ? stripped : original;
    }

    private static String exceptionTable(CodeAttribute code) {
        StringBuilder sb = new StringBuilder();
        code.exceptionHandlers().forEach(h -> sb.append(code.labelToBci(h.tryStart())).append(',')
            .append(code.labelToBci(h.tryEnd())).append(',').append(code.labelToBci(h.handler())).append(',')
            .append(h.catchType().map(t -> t.asInternalName()).orElse("*")).append(';'));
        return sb.toString();
    }

    private static String stackMaps(CodeAttribute code) {
        return code.findAttribute(Attributes.stackMapTable())
            .map(t -> t.entries().size() + ":" + t.entries().stream()
                .map(f -> code.labelToBci(f.target()) + "/" + types(code, f.locals()) + "/" + types(code, f.stack())).toList())
            .orElse("none");
    }

    /** Verification types as text; an uninitialized one by the offset of its {@code new} (its label is per model). */
    private static String types(CodeAttribute code, List<StackMapFrameInfo.VerificationTypeInfo> types) {
        StringBuilder sb = new StringBuilder();
        for (StackMapFrameInfo.VerificationTypeInfo t : types) {
            sb.append(t instanceof StackMapFrameInfo.UninitializedVerificationTypeInfo u ? "new@" + code.labelToBci(u.newTarget()) : t.toString()).append(',');
        }
        return sb.toString();
    }
}
