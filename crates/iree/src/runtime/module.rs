//! A loaded VMFB module, its exported functions, and calls into them.

use super::aligned::{AlignedBytes, IMPORT_ALIGNMENT};
use super::buffer::{input_view, HostInput, HostRange, OutputBuffer};
use super::device::{string, view, Device};
use super::error::{check, RuntimeError};
use super::instance::{host_allocator, instance};
use crate::target::ExecutionModel;
use eerie_sys::runtime as sys;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A compiled module loaded on a device. Thread-safe: concurrent calls each run in
/// their own VM context, taken from a pool that grows to the number of threads that
/// ever called at once.
pub struct Module {
    raw: *mut sys::iree_vm_module_t,
    /// Unique per loaded module in this process, so a `Function` is never used with a
    /// module other than its own (addresses can be reused after a drop; ids cannot).
    id: u64,
    /// Idle VM contexts. A context is not thread-safe, so each call takes one out.
    sessions: Mutex<Vec<Session>>,
    device: Arc<Device>,
    /// The modules every context links before this one (one reference each): IREE's `hal`
    /// module for the full HAL execution model, `hal_inline` and `hal_loader` for inline.
    imports: Vec<*mut sys::iree_vm_module_t>,
    /// Whether calls run dispatches on the calling thread without IREE's FPU push (the
    /// inline loader does not call it), so the call itself must install the IEEE state.
    fpu_guard: bool,
    /// Whether every input is passed as a private copy, never as the caller's own bytes
    /// (see [`Module::with_private_inputs`]).
    private_inputs: bool,
    /// The only inputs passed as private copies where `private_inputs` (see
    /// [`Module::with_private_inputs_only`]); `None`: all of them.
    private_only: Option<Vec<usize>>,
    /// The alignment the module's code assumes of its input buffers (see
    /// [`Module::with_input_alignment`]).
    input_alignment: usize,
    /// The VMFB: IREE's module references these bytes rather than copying them.
    _vmfb: AlignedBytes,
}

// SAFETY: a bytecode module is immutable once loaded and IREE documents VM modules as
// thread-safe; the mutable per-call state (contexts, lists) sits behind the mutex and is
// used by one thread at a time.
unsafe impl Send for Module {}
// SAFETY: as above.
unsafe impl Sync for Module {}

/// An exported function, resolved once so that calls skip the name lookup.
#[derive(Clone, Debug)]
pub struct Function {
    raw: sys::iree_vm_function_t,
    module_id: u64,
    name: String,
}

// SAFETY: `iree_vm_function_t` is a module pointer plus two indices; it is only used
// with the module it came from (checked by id in `call`), which outlives that call.
unsafe impl Send for Function {}
// SAFETY: as above; it is never mutated.
unsafe impl Sync for Function {}

impl Function {
    /// The fully qualified name, e.g. "module.main".
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Module {
    /// Loads VMFB bytes (from `Compiler::compile` or the disk cache) onto `device`, as
    /// the execution model they were compiled for requires.
    pub fn load_as(model: ExecutionModel, device: Arc<Device>, vmfb: Vec<u8>) -> Result<Module, RuntimeError> {
        match model {
            ExecutionModel::Hal => Module::load(device, vmfb),
            ExecutionModel::Inline => Module::load_inline(device, vmfb),
        }
    }

    /// Loads VMFB bytes compiled for the full HAL execution model onto `device`.
    pub fn load(device: Arc<Device>, vmfb: Vec<u8>) -> Result<Module, RuntimeError> {
        // SAFETY: the device's HAL module is alive; the Module keeps one reference.
        unsafe { sys::iree_vm_module_retain(device.hal_module) };
        let imports = vec![device.hal_module];
        Module::load_with(device, vmfb, imports, false)
    }

    /// Loads a VMFB compiled with `--iree-execution-model=inline-dynamic` onto a local
    /// CPU `device`. Its contexts link `hal_inline` (buffers from the device's allocator)
    /// and `hal_loader` (the module's embedded ELF executables, dispatched on the calling
    /// thread) instead of the `hal` module: no command buffers, semaphores or fences per
    /// call, which is most of what a call on a small input costs.
    pub fn load_inline(device: Arc<Device>, vmfb: Vec<u8>) -> Result<Module, RuntimeError> {
        // The loader runs executables on the host: device memory must be host memory.
        if !device.driver().starts_with("local-") {
            return Err(RuntimeError::Usage(format!(
                "the inline execution model runs on local CPU devices only, not on {}",
                device.driver()
            )));
        }
        let vm = instance()?.vm;
        let mut inline = std::ptr::null_mut();
        // SAFETY: the instance and the device's allocator are alive; the inline module
        // retains the allocator.
        check(unsafe {
            sys::iree_hal_inline_module_create(
                vm,
                sys::iree_hal_inline_module_flag_bits_t_IREE_HAL_INLINE_MODULE_FLAG_NONE,
                sys::iree_hal_module_debug_sink_null(),
                sys::iree_hal_device_allocator(device.raw),
                host_allocator(),
                &mut inline,
            )
        })?;
        let mut imports = vec![inline];
        match loader_module(vm) {
            Ok(loader) => imports.push(loader),
            Err(error) => {
                release_all(&imports);
                return Err(error);
            }
        }
        Module::load_with(device, vmfb, imports, true)
    }

    /// Loads `vmfb` with `imports` (references this function takes over) before it in
    /// every context.
    fn load_with(
        device: Arc<Device>,
        vmfb: Vec<u8>,
        imports: Vec<*mut sys::iree_vm_module_t>,
        fpu_guard: bool,
    ) -> Result<Module, RuntimeError> {
        let instance = match instance() {
            Ok(instance) => instance,
            Err(error) => {
                release_all(&imports);
                return Err(error);
            }
        };
        // Flatbuffer and embedded executables are read in place, so keep them aligned
        // like IREE's own allocations.
        let vmfb = AlignedBytes::copy_of(&vmfb);
        let mut raw = std::ptr::null_mut();
        // SAFETY: the bytes live in `Module::_vmfb` for as long as the module (they are
        // dropped after it is released); the null archive allocator tells IREE not to free
        // them.
        let created = check(unsafe {
            sys::iree_vm_bytecode_module_create(
                instance.vm,
                sys::iree_vm_bytecode_module_flags_e_IREE_VM_BYTECODE_MODULE_FLAG_NONE,
                sys::iree_const_byte_span_t {
                    data: vmfb.as_slice().as_ptr(),
                    data_length: vmfb.as_slice().len(),
                },
                sys::iree_allocator_t::default(),
                host_allocator(),
                &mut raw,
            )
        });
        if let Err(error) = created {
            release_all(&imports);
            return Err(error);
        }
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        let module = Module {
            raw,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            sessions: Mutex::new(Vec::new()),
            device,
            imports,
            fpu_guard,
            private_inputs: false,
            private_only: None,
            input_alignment: IMPORT_ALIGNMENT,
            _vmfb: vmfb,
        };
        // A first context proves the module links against the HAL module (and loads its
        // executables) now rather than on the first call.
        let session = module.new_session()?;
        module.give_back(session);
        Ok(module)
    }

    /// Passes every input as a private copy instead of the caller's own bytes. For modules
    /// whose code may write into an argument's buffer: IREE 3.13 updates an operation's
    /// destination in place where it is a function argument (iree-org/iree#16168), and
    /// an aligned host array is otherwise imported as is.
    pub fn with_private_inputs(mut self, private: bool) -> Module {
        self.private_inputs = private;
        self
    }

    /// Restricts [`Module::with_private_inputs`] to the inputs at `positions` (those the
    /// module may write into); `None` keeps all of them private.
    pub fn with_private_inputs_only(mut self, positions: Option<Vec<usize>>) -> Module {
        self.private_only = positions;
        self
    }

    /// Host inputs aligned to `alignment` are used in place, the others copied: for modules
    /// whose code assumes no more of its buffers, as those compiled from
    /// [`crate::Target::module`] on the CPU ([`crate::Target::input_alignment`]). The
    /// default, IREE's own 64, is right for a module compiled from any MLIR.
    pub fn with_input_alignment(mut self, alignment: usize) -> Module {
        assert!(alignment.is_power_of_two(), "alignment {alignment} is not a power of two");
        self.input_alignment = alignment;
        self
    }

    /// The module's name: "module" for MLIR whose top-level `module` has no name.
    pub fn name(&self) -> String {
        // SAFETY: the module is alive; the view is copied.
        unsafe { string(sys::iree_vm_module_name(self.raw)) }
    }

    /// Looks up an exported function by its qualified name, `"<module>.<function>"`.
    /// MLIR `func.func @main` in an unnamed top-level module is `"module.main"`; a bare
    /// `"main"` is qualified with this module's name.
    pub fn function(&self, name: &str) -> Result<Function, RuntimeError> {
        let qualified = if name.contains('.') {
            name.to_string()
        } else {
            format!("{}.{name}", self.name())
        };
        let session = self.take_session()?;
        let mut raw = sys::iree_vm_function_t::default();
        // SAFETY: the context is alive and ours for the duration; the name outlives the call.
        let status = unsafe {
            sys::iree_vm_context_resolve_function(session.context, view(&qualified), &mut raw)
        };
        self.give_back(session);
        check(status).map_err(|error| {
            RuntimeError::Usage(format!("no function {qualified:?} in module: {error}"))
        })?;
        if raw.module != self.raw {
            return Err(RuntimeError::Usage(format!(
                "{qualified:?} is not a function of this module"
            )));
        }
        Ok(Function {
            raw,
            module_id: self.id,
            name: qualified,
        })
    }

    /// Calls `function` with host inputs and returns its results.
    ///
    /// Inputs aligned as the module's code assumes (see [`Module::with_input_alignment`])
    /// are used in place (no copy) on local CPU devices; others are copied. The call is
    /// synchronous: when it returns, IREE holds no reference to any input. IREE checks shapes and element types against the
    /// function's signature and a mismatch is an `Err`.
    pub fn call(
        &self,
        function: &Function,
        inputs: &[HostInput<'_>],
    ) -> Result<Vec<OutputBuffer>, RuntimeError> {
        if function.module_id != self.id {
            return Err(RuntimeError::Usage(format!(
                "{:?} belongs to another module",
                function.name
            )));
        }
        let mut session = self.take_session()?;
        let result = if self.fpu_guard {
            let fpu = crate::fpu::iree_fpu_state_push(0);
            let result = session.call(&self.device, function, inputs, self.private_inputs, self.private_only.as_deref(), self.input_alignment);
            crate::fpu::iree_fpu_state_pop(fpu);
            result
        } else {
            session.call(&self.device, function, inputs, self.private_inputs, self.private_only.as_deref(), self.input_alignment)
        };
        session.clear();
        // A failed invocation may leave module state half-initialized: drop that context.
        if result.is_ok() {
            self.give_back(session);
        }
        result
    }

    fn take_session(&self) -> Result<Session, RuntimeError> {
        let idle = self
            .sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop();
        match idle {
            Some(session) => Ok(session),
            None => self.new_session(),
        }
    }

    fn give_back(&self, session: Session) {
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(session);
    }

    fn new_session(&self) -> Result<Session, RuntimeError> {
        let mut modules = self.imports.clone();
        modules.push(self.raw);
        Session::new(instance()?.vm, &mut modules)
    }
}

/// A `hal_loader` module that loads embedded ELF executables (what llvm-cpu emits by
/// default); they import nothing, so no plugin manager.
fn loader_module(vm: *mut sys::iree_vm_instance_t) -> Result<*mut sys::iree_vm_module_t, RuntimeError> {
    let mut loader = std::ptr::null_mut();
    // SAFETY: out-pointer valid; no plugin manager.
    check(unsafe { sys::iree_hal_embedded_elf_loader_create(std::ptr::null_mut(), host_allocator(), &mut loader) })?;
    let mut module = std::ptr::null_mut();
    // SAFETY: the module retains the loader, so ours is released whatever the outcome.
    let status = unsafe {
        let status = sys::iree_hal_loader_module_create(
            vm,
            sys::iree_hal_loader_module_flag_bits_t_IREE_HAL_LOADER_MODULE_FLAG_NONE,
            1,
            &mut loader,
            host_allocator(),
            &mut module,
        );
        sys::iree_hal_executable_loader_release(loader);
        status
    };
    check(status)?;
    Ok(module)
}

fn release_all(modules: &[*mut sys::iree_vm_module_t]) {
    for &module in modules {
        // SAFETY: each is a reference the caller owns and gives up.
        unsafe { sys::iree_vm_module_release(module) };
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // Contexts reference the module, so they go first.
        self.sessions
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clear();
        // SAFETY: no context refers to the module any more; `_vmfb` is dropped after this.
        unsafe { sys::iree_vm_module_release(self.raw) };
        release_all(&self.imports);
    }
}

/// A VM context with argument and result lists, reused call after call.
struct Session {
    context: *mut sys::iree_vm_context_t,
    inputs: *mut sys::iree_vm_list_t,
    outputs: *mut sys::iree_vm_list_t,
    /// Host ranges imported by the current call, reused to avoid an allocation per call.
    imports: Vec<HostRange>,
    /// Aligned copies of the current call's misaligned inputs, imported in their place.
    staging: Vec<AlignedBytes>,
}

impl Session {
    fn new(
        vm: *mut sys::iree_vm_instance_t,
        modules: &mut [*mut sys::iree_vm_module_t],
    ) -> Result<Session, RuntimeError> {
        let mut session = Session {
            context: std::ptr::null_mut(),
            inputs: std::ptr::null_mut(),
            outputs: std::ptr::null_mut(),
            imports: Vec::new(),
            staging: Vec::new(),
        };
        // SAFETY: the instance and modules are alive; the context retains the modules.
        // The lists hold any type (a default type def) with a small initial capacity.
        // On error, `session` drops whatever was created.
        unsafe {
            check(sys::iree_vm_context_create_with_modules(
                vm,
                sys::iree_vm_context_flag_bits_t_IREE_VM_CONTEXT_FLAG_NONE,
                modules.len(),
                modules.as_mut_ptr(),
                host_allocator(),
                &mut session.context,
            ))?;
            check(sys::iree_vm_list_create(
                sys::iree_vm_type_def_t::default(),
                8,
                host_allocator(),
                &mut session.inputs,
            ))?;
            check(sys::iree_vm_list_create(
                sys::iree_vm_type_def_t::default(),
                8,
                host_allocator(),
                &mut session.outputs,
            ))?;
        }
        Ok(session)
    }

    fn call(
        &mut self,
        device: &Arc<Device>,
        function: &Function,
        inputs: &[HostInput<'_>],
        private_inputs: bool,
        private_only: Option<&[usize]>,
        input_alignment: usize,
    ) -> Result<Vec<OutputBuffer>, RuntimeError> {
        for (index, input) in inputs.iter().enumerate() {
            let private = private_inputs && private_only.is_none_or(|only| only.contains(&index));
            let (buffer_view, imported) = input_view(device, index, input, &mut self.staging, private, input_alignment)?;
            self.imports.extend(imported);
            // SAFETY: on success the list takes over our reference to the view (move); a
            // failed push (allocation, type) leaves it with us, released below.
            let status = unsafe {
                let mut reference = sys::iree_hal_buffer_view_move_ref(buffer_view);
                sys::iree_vm_list_push_ref_move(self.inputs, &mut reference)
            };
            if !status.is_null() {
                // SAFETY: the failed push left our reference with us.
                unsafe { sys::iree_hal_buffer_view_release(buffer_view) };
                check(status)?;
            }
        }
        // SAFETY: context, lists and function are alive; the invocation is synchronous.
        let invoked = check(unsafe {
            sys::iree_vm_invoke(
                self.context,
                function.raw,
                sys::iree_vm_invocation_flag_bits_t_IREE_VM_INVOCATION_FLAG_NONE,
                std::ptr::null(),
                self.inputs,
                self.outputs,
                host_allocator(),
            )
        });
        // SAFETY: the list is ours; this drops its references to the inputs.
        unsafe { sys::iree_vm_list_clear(self.inputs) };
        invoked?;
        // SAFETY: the list is alive.
        let count = unsafe { sys::iree_vm_list_size(self.outputs) };
        let mut results = Vec::with_capacity(count);
        for index in 0..count {
            let mut reference = sys::iree_vm_ref_t::default();
            let mut buffer_view = std::ptr::null_mut();
            // SAFETY: index < size; the retained reference becomes the OutputBuffer's
            // (or is released here if it is not a buffer view).
            unsafe {
                check(sys::iree_vm_list_get_ref_retain(
                    self.outputs,
                    index,
                    &mut reference,
                ))?;
                let is_view = sys::iree_hal_buffer_view_check_deref(reference, &mut buffer_view);
                if !is_view.is_null() {
                    sys::iree_vm_ref_release(&mut reference);
                    return Err(RuntimeError::Usage(format!(
                        "result {index} of {:?} is not a tensor: {}",
                        function.name,
                        check(is_view)
                            .err()
                            .map(|e| e.to_string())
                            .unwrap_or_default()
                    )));
                }
            }
            results.push(OutputBuffer::from_view(device, buffer_view, &self.imports)?);
        }
        Ok(results)
    }

    /// Drops every reference the last call left in the lists.
    fn clear(&mut self) {
        // SAFETY: the lists are alive and ours.
        unsafe {
            sys::iree_vm_list_clear(self.inputs);
            sys::iree_vm_list_clear(self.outputs);
        }
        self.imports.clear();
        // Last: no list refers to a view of the staged copies any more.
        self.staging.clear();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: each pointer is null or a reference this session owns.
        unsafe {
            if !self.inputs.is_null() {
                sys::iree_vm_list_release(self.inputs);
            }
            if !self.outputs.is_null() {
                sys::iree_vm_list_release(self.outputs);
            }
            if !self.context.is_null() {
                sys::iree_vm_context_release(self.context);
            }
        }
    }
}
